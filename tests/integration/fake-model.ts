import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** How the fake model answers: one verdict, nonsense, never ("slow": only the caller's timeout ends the call), or with an HTTP 500. */
export type TFakeModelMode = "allow-low" | "allow-high" | "deny" | "ask" | "garbage" | "slow" | "500";
export type TFakeModel = { server: Server; url: string; requests: number; mode: TFakeModelMode; /** The request bodies, in order. */ bodies: string[] };

const VERDICTS: Record<string, unknown> = {
  "allow-low": { decision: "allow-once", risk: "low", rationale: "Reads a file in the workspace." },
  "allow-high": { decision: "allow-once", risk: "high", rationale: "Risky but allowed?" },
  deny: { decision: "deny", risk: "high", rationale: "Deletes data outside the workspace." },
  ask: { decision: "ask", risk: "medium", rationale: "Installs packages; a person should decide." },
};

/** A local server that answers like an OpenAI-compatible chat endpoint and keeps the requests it got. */
export async function fakeModel(): Promise<TFakeModel> {
  const fake = { requests: 0, mode: "allow-low", bodies: [] as string[] } as TFakeModel;
  fake.server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      fake.requests++;
      fake.bodies.push(Buffer.concat(chunks).toString("utf8"));
      if (fake.mode === "500") return res.writeHead(500).end("boom");
      const content = fake.mode === "garbage" ? "I think it is probably fine!" : JSON.stringify(VERDICTS[fake.mode] ?? {});
      const reply = () =>
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({ id: "x", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
        );
      // "slow" holds its answer for good: a late answer could still beat a timeout on a loaded machine.
      if (fake.mode !== "slow") reply();
    });
  });
  await new Promise<void>((r) => fake.server.listen(0, "127.0.0.1", r));
  fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}/v1`;
  return fake;
}
