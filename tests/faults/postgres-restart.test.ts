import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { demoApiKey, freePort, startServerProcess, type TServerProcess } from "../../server/testing/server-process";
import { call, createOwnCluster, expectAuditPasses, lines, requirePostgres, openQuery, retrying, type TOwnCluster } from "./support";

/**
 * Fault: PostgreSQL restarts (or is down for a while) under running replicas. This uses a cluster
 * of its own on a free port, never the shared one. The servers keep running, answer 503
 * `capacity` (never 500) while the database is gone, reconnect by themselves, and every run
 * finishes or fails cleanly: approvals, steps and events stay consistent (the load audit passes).
 */
let own: TOwnCluster | null = null;
let reason = "";
let databaseUrl = "";
let replicas: TServerProcess[] = [];
let key = "";
const dirs: string[] = [];

beforeAll(async () => {
  requirePostgres();
  const made = await createOwnCluster();
  if ("reason" in made) {
    reason = made.reason;
    return;
  }
  own = made;
  const admin = postgres(own.url(), { max: 1, onnotice: () => {} });
  await admin.unsafe("create database countersign");
  await admin.end();
  databaseUrl = own.url("countersign");
  const env = { BETTER_AUTH_SECRET: randomBytes(32).toString("base64url"), COUNTERSIGN_SECRET_KEY: randomBytes(32).toString("base64"), COUNTERSIGN_LEASE_MS: "2000" };
  for (let i = 0; i < 2; i++) dirs.push(mkdtempSync(join(tmpdir(), "countersign-pgfault-")));
  replicas.push(await startServerProcess({ dataDir: dirs[0] as string, port: await freePort(), databaseUrl, env }));
  key = await demoApiKey(dirs[0] as string);
  replicas.push(await startServerProcess({ dataDir: dirs[1] as string, port: await freePort(), databaseUrl, env }));
});

afterAll(async () => {
  for (const r of replicas) await r.kill("SIGKILL").catch(() => {});
  replicas = [];
  own?.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const url = (i: number) => replicas[i]?.url as string;
const execScript = (...commands: string[]) => ({ script: [...commands.map((command) => ({ toolCalls: [{ name: "exec", arguments: { command } }] })), { text: "done" }] });
const envelope = (i: number, id: string, sessionId: string) => call(`${url(i)}/v1/responses/${id}?sessionId=${sessionId}`, key);

describe("fault: PostgreSQL restarts under the replicas (own throwaway cluster)", () => {
  test("the cluster could be created (otherwise the reason is reported here)", () => {
    expect(reason, `own PostgreSQL cluster: ${reason}`).toBe("");
  });

  test("a suspended run survives a restart and is decided afterwards on the other replica", async () => {
    if (!own) return;
    const started = await call(`${url(0)}/v1/responses`, key, { input: execScript("echo one >> one.txt") });
    expect(started.status, started.text).toBe(200);
    const action = { ...(started.body?.requiredAction as { id: string }), cwd: join(dirs[0] as string, "workspaces", started.body?.sessionId as string) };
    own.restart();
    const decided = await retrying(
      () => call(`${url(1)}/v1/approvals/${action.id}`, key, { decision: "approve" }),
      (r) => r.status === 200 || r.status === 409,
    );
    if (decided.status === 200) expect(decided.body?.status).toBe("completed");
    const done = await retrying(() => envelope(0, started.body?.id as string, started.body?.sessionId as string), (r) => r.body?.status === "completed");
    expect(done.body?.outputText).toBe("done");
    expect(lines(action.cwd, "one.txt")).toBe(1);
  });

  test("while the database is down: 503 capacity with {detail, code}, never 500; healthz still answers; service resumes after", async () => {
    if (!own) return;
    own.stop();
    try {
      for (const i of [0, 1]) {
        const invoked = await call(`${url(i)}/v1/responses`, key, { input: "hello" }, 30_000);
        expect(invoked.status, invoked.text).toBe(503);
        expect(invoked.body).toEqual({ detail: expect.any(String), code: "capacity" });
        const gateway = await call(`${url(i)}/v1/gateway/question.list`, key, {}, 30_000);
        expect([503]).toContain(gateway.status);
        const health = await call(`${url(i)}/v1/healthz`, key);
        expect(health.status).toBe(200);
      }
    } finally {
      own.start();
    }
    for (const i of [0, 1]) {
      const again = await retrying(() => call(`${url(i)}/v1/responses`, key, { input: "back" }), (r) => r.status === 200);
      expect(again.body?.status).toBe("completed");
    }
    for (const r of replicas) expect(r.child.exitCode, r.output()).toBeNull();
  });

  test("a database outage while an approved command runs: the run finishes or fails cleanly, the command is never run twice", async () => {
    if (!own) return;
    const started = await call(`${url(0)}/v1/responses`, key, { input: execScript("sleep 1.5 && echo mid >> mid.txt", "echo after >> after.txt") });
    expect(started.status, started.text).toBe(200);
    const id = started.body?.id as string;
    const sessionId = started.body?.sessionId as string;
    const first = { ...(started.body?.requiredAction as { id: string }), cwd: join(dirs[0] as string, "workspaces", sessionId) };
    const decision = call(`${url(0)}/v1/approvals/${first.id}`, key, { decision: "approve" }, 90_000);
    // Once the command is running, take the database away for longer than a lease.
    const db = openQuery(databaseUrl);
    await retrying(
      async () => (await db.sql`select status::text as status from approvals where id = ${first.id}`)[0] as { status: string },
      (r) => r.status === "approved",
      15_000,
    );
    await db.close();
    own.stop();
    await new Promise((r) => setTimeout(r, 3500));
    own.start();
    const answered = await decision;
    console.info(`outage during the command: the in-flight decision answered ${answered.status} ${answered.text.slice(0, 160)}`);
    expect([200, 503, 504, 0]).toContain(answered.status);
    expect(answered.status, answered.text).not.toBe(500);
    // The run moves on by itself (adoption after the lease lapsed): to the second approval, or to a clean failure.
    const next = await retrying(
      () => envelope(1, id, sessionId),
      (r) => (r.body?.status === "requires_action" && (r.body.requiredAction as { id: string }).id !== first.id) || ["completed", "failed"].includes(String(r.body?.status)),
      60_000,
    );
    console.info(`outage during the command: the run then went to ${next.body?.status}; mid.txt has ${lines(first.cwd, "mid.txt")} line(s)`);
    if (next.body?.status === "requires_action") {
      const second = next.body.requiredAction as { id: string };
      const finished = await retrying(() => call(`${url(1)}/v1/approvals/${second.id}`, key, { decision: "approve" }), (r) => r.status === 200 || r.status === 409);
      expect(finished.status).toBe(200);
      expect(finished.body?.status).toBe("completed");
      expect(lines(first.cwd, "after.txt")).toBe(1);
    } else if (next.body?.status === "failed") {
      expect(next.body.error).toEqual({ code: expect.any(String), message: expect.any(String) });
    }
    expect(lines(first.cwd, "mid.txt")).toBeLessThanOrEqual(1);
    for (const r of replicas) expect(r.child.exitCode, r.output()).toBeNull();
    await expectAuditPasses(databaseUrl);
  });

  test("readiness: /v1/readyz answers 503 with the reason while PostgreSQL is stopped, and 200 again once it is back; liveness stays 200", async () => {
    if (!own) return;
    const ready = async (i: number) => {
      const res = await fetch(`${url(i)}/v1/readyz`, { signal: AbortSignal.timeout(10_000) });
      return { status: res.status, body: (await res.json()) as { reason?: string; status?: string } };
    };
    // The test before this one ended with an outage: readiness comes back on its own, within a minute.
    for (const i of [0, 1]) {
      const before = await retrying(() => ready(i), (r) => r.status === 200, 60_000);
      expect(before.status, JSON.stringify(before.body)).toBe(200);
    }
    own.stop();
    try {
      for (const i of [0, 1]) {
        const down = await retrying(() => ready(i), (r) => r.status === 503, 20_000);
        expect(["database_unreachable", "database_timeout"]).toContain(down.body.reason);
        expect((await fetch(`${url(i)}/v1/healthz`)).status).toBe(200);
      }
    } finally {
      own.start();
    }
    for (const i of [0, 1]) {
      const up = await retrying(() => ready(i), (r) => r.status === 200, 60_000);
      expect(up.body.status).toBe("ready");
    }
  });

  test("after the restarts, cross-replica notifications work again: a decision on one replica wakes a stream on the other", async () => {
    if (!own) return;
    const started = await call(`${url(0)}/v1/responses`, key, { input: execScript("echo n >> n.txt") });
    const action = started.body?.requiredAction as { id: string };
    const stream = call(`${url(1)}/v1/responses/${started.body?.id}/events?sessionId=${started.body?.sessionId}&after=-1`, key, undefined, 30_000);
    await new Promise((r) => setTimeout(r, 300));
    const decided = await call(`${url(0)}/v1/approvals/${action.id}`, key, { decision: "approve" });
    expect(decided.body?.status).toBe("completed");
    const events = await stream;
    expect(events.status).toBe(200);
    expect(events.text).toContain('"status":"completed"');
    await expectAuditPasses(databaseUrl);
  });
});
