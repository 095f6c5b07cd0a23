import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { createTestDatabaseUrl } from "../../db/testing";
import { demoApiKey, freePort, startServerProcess, type TServerProcess } from "../../server/testing/server-process";

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

const post = async (url: string, key: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

test("a suspended run survives SIGKILL of the server and resumes without re-running earlier steps", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "countersign-restart-"));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const database = await createTestDatabaseUrl();
  if (database) cleanups.push(database.drop);
  const port = await freePort();
  let server: TServerProcess = await startServerProcess({ dataDir, port, databaseUrl: database?.url });
  cleanups.push(() => server.kill("SIGKILL"));
  const key = await demoApiKey(dataDir);

  const script = {
    script: [
      {
        text: "first",
        toolCalls: [
          { name: "echo", arguments: { text: "before" } },
          { name: "exec", arguments: { command: "echo a >> a.txt && cat a.txt | wc -l" } },
        ],
      },
      { text: " second", toolCalls: [{ name: "exec", arguments: { command: "echo b >> b.txt" } }] },
      { text: " done" },
    ],
  };
  const first = await (await post(`${server.url}/v1/responses`, key, { input: script })).json();
  expect(first.status).toBe("requires_action");
  const workspace = join(dataDir, "workspaces", first.sessionId as string);
  const second = await (await post(`${server.url}/v1/approvals/${first.requiredAction.id}`, key, { decision: "approve" })).json();
  expect(second.status).toBe("requires_action");
  expect(second.requiredAction.id).not.toBe(first.requiredAction.id);
  expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("a\n");

  await server.kill("SIGKILL");
  server = await startServerProcess({ dataDir, port, databaseUrl: database?.url });

  const pending = await (await fetch(`${server.url}/v1/responses/${first.id}?sessionId=${first.sessionId}`, { headers: { authorization: `Bearer ${key}` } })).json();
  expect(pending.status).toBe("requires_action");
  expect(pending.requiredAction.id).toBe(second.requiredAction.id);

  const done = await (await post(`${server.url}/v1/approvals/${second.requiredAction.id}`, key, { decision: "approve" })).json();
  expect(done.status).toBe("completed");
  expect(done.outputText).toBe("first second done");
  expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("a\n");
  expect(readFileSync(join(workspace, "b.txt"), "utf8")).toBe("b\n");
  const results = (done.output as Array<{ type: string; name?: string }>).filter((i) => i.type === "tool_result");
  expect(results.map((r) => r.name)).toEqual(["echo", "exec", "exec"]);
  await server.kill("SIGTERM");
}, 120_000);
