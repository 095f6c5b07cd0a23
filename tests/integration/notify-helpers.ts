import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import pino from "pino";
import { type DbHandle, openDb } from "../../db/client";
import { createTestDb } from "../../db/testing";
import { createApp, type TApp } from "../../server/app";
import type { TNotifyConfig } from "../../server/notify/config";
import { verifySignature } from "../../server/notify/sign";
import { testConfig, type TTestApp } from "../../server/testing/test-app";
import type { TTrpcBody } from "./questions-helpers";

/** A mail as the SMTP sink received it. */
export type TSinkMail = { to: string[]; from: string; subject: string; text: string; html: string; receivedAt: string };

/** The SMTP sink process (tests/fixtures/smtp-sink.ts) and its JSON view of received mail. */
export type TSmtpSink = { smtpPort: number; mails: () => Promise<TSinkMail[]>; stop: () => Promise<void> };

export async function startSmtpSink(env: Record<string, string> = {}): Promise<TSmtpSink> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "tests/fixtures/smtp-sink.ts"], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  const ports = await new Promise<{ smtpPort: number; httpPort: number }>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once("line", (line) => resolve(JSON.parse(line) as { smtpPort: number; httpPort: number }));
    child.once("exit", (code) => reject(new Error(`the SMTP sink exited (${code})`)));
  });
  return {
    smtpPort: ports.smtpPort,
    mails: async () => (await (await fetch(`http://127.0.0.1:${ports.httpPort}/mails`)).json()) as TSinkMail[],
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** One request the webhook receiver got, with whether its signature verified. */
export type TReceived = { path: string; headers: IncomingHttpHeaders; body: string; verified: boolean; answered: number | "reset"; at: number };

/**
 * A webhook (and Slack) receiver: records every request, verifies `X-Countersign-Signature` with
 * the shared secret, and fails the next requests as planned (`500` or a connection reset).
 */
export async function startReceiver(secret: string): Promise<{ url: string; received: TReceived[]; failNext: (path: string, ...outcomes: Array<500 | "reset">) => void; close: () => Promise<void> }> {
  const received: TReceived[] = [];
  const plans = new Map<string, Array<500 | "reset">>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const path = req.url ?? "/";
      const verified = verifySignature(secret, { signature: req.headers["x-countersign-signature"] as string | undefined, timestamp: req.headers["x-countersign-timestamp"] as string | undefined }, body);
      const outcome = plans.get(path)?.shift() ?? 200;
      received.push({ path, headers: req.headers, body, verified, answered: outcome, at: Date.now() });
      if (outcome === "reset") return void req.socket.destroy();
      res.writeHead(outcome, { "content-type": "text/plain" });
      res.end(outcome === 200 ? "ok" : "failing on purpose");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    failNext: (path, ...outcomes) => plans.set(path, [...(plans.get(path) ?? []), ...outcomes]),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A tRPC call over HTTP without any credential (link procedures authenticate by token only). */
export async function trpcPublic(app: TTestApp, type: "query" | "mutation", path: string, input: unknown): Promise<{ status: number; body: TTrpcBody }> {
  const res =
    type === "query"
      ? await fetch(`${app.url}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`)
      : await fetch(`${app.url}/api/trpc/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(input) });
  return { status: res.status, body: (await res.json()) as TTrpcBody };
}

/** The single-use token of the link in a mail (`<publicUrl>/l/<token>`). */
export function linkToken(mail: TSinkMail): string {
  const match = mail.text.match(/\/l\/([A-Za-z0-9_-]{43})\b/);
  if (!match?.[1]) throw new Error(`no single-use link in mail: ${mail.text}`);
  return match[1];
}

/** An email address the test app gives a user of this name (see addUser). */
export const emailOf = (name: string): string => `${name.toLowerCase().replace(/[^a-z0-9]+/g, ".")}@countersign.local`;

/**
 * Two server instances with the same notification config on one fresh PostgreSQL database (as
 * two replicas would run), handed to `body`; both are closed and their data removed afterwards.
 */
export async function withTwoServers(notify: TNotifyConfig, body: (a: TApp, b: TApp, db: DbHandle) => Promise<void>): Promise<void> {
  const handleA = await createTestDb();
  const handleB = await openDb({ url: handleA.url, poolSize: 5 });
  const dataDir = mkdtempSync(join(tmpdir(), "countersign-replicas-"));
  const log = pino({ level: "silent" });
  const a = await createApp({ db: handleA, log, config: testConfig({ dataDir, notify, rateLimit: null }) });
  const b = await createApp({ db: handleB, log, config: testConfig({ dataDir, notify, rateLimit: null }) });
  try {
    await body(a, b, handleA);
  } finally {
    await a.close();
    await b.close();
    await handleB.close();
    await handleA.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
