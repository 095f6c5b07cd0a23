import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabaseUrl } from "../../db/testing";
import { checkSideEffects, runLoad } from "../../scripts/load/run";
import { demoApiKey, freePort, startServerProcess, type TServerProcess } from "../../server/testing/server-process";
import { call, expectAuditPasses, requirePostgres, openQuery, sseFrames } from "./support";

/**
 * Fault: the connection pool is exhausted. One server with COUNTERSIGN_DB_POOL=2 serves many
 * concurrent long-polls (question.waitAnswer), event streams and decision flows at once.
 * Requests queue for a connection (or get 503 `capacity`); nothing acknowledged is lost and
 * nothing runs twice.
 */
let server: TServerProcess;
let database: { url: string; drop: () => Promise<void> } | null = null;
let key = "";
const dataDir = mkdtempSync(join(tmpdir(), "countersign-pool-"));

beforeAll(async () => {
  requirePostgres();
  database = await createTestDatabaseUrl();
  server = await startServerProcess({ dataDir, port: await freePort(), databaseUrl: database?.url, env: { COUNTERSIGN_DB_POOL: "2" } });
  key = await demoApiKey(dataDir);
});
afterAll(async () => {
  await server?.kill("SIGKILL");
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const ALLOWED = new Set([200, 503]);

describe("fault: connection pool of 2 under many concurrent waits and decisions", () => {
  test("the server really runs with a pool of 2", async () => {
    const db = openQuery(database?.url as string);
    try {
      // Busy enough to need every connection: 10 concurrent question long-polls.
      const asked = await call(`${server.url}/v1/gateway/question.request`, key, { questions: [{ questionId: "probe", header: "P", question: "?", options: [{ label: "a" }, { label: "b" }] }] });
      const waits = Array.from({ length: 10 }, () => call(`${server.url}/v1/gateway/question.waitAnswer`, key, { id: (asked.body as { payload: { id: string } }).payload.id, timeoutMs: 2000 }));
      let most = 0;
      for (let i = 0; i < 20; i++) {
        const [row] = await db.sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`;
        most = Math.max(most, (row as { n: number }).n);
        await new Promise((r) => setTimeout(r, 50));
      }
      await Promise.all(waits);
      // 2 pool connections + 1 LISTEN connection of the bus.
      expect(most).toBeGreaterThanOrEqual(2);
      expect(most).toBeLessThanOrEqual(3);
    } finally {
      await db.close();
    }
  });

  test("long-polls, streams and decision flows at once: queued, not lost, not doubled", async () => {
    const statuses: number[] = [];
    const track = <T extends { status: number }>(r: T): T => {
      statuses.push(r.status);
      return r;
    };
    // 30 gateway questions, each with a waiter long-polling for its answer.
    const questions = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call(`${server.url}/v1/gateway/question.request`, key, { questions: [{ questionId: `q${i}`, header: "Q", question: "?", options: [{ label: "a" }, { label: "b" }] }], timeoutMs: 120_000 }).then(track),
      ),
    );
    const ids = questions.map((q) => (q.body as { payload: { id: string } }).payload.id);
    const waiters = ids.map((id) => call(`${server.url}/v1/gateway/question.waitAnswer`, key, { id, timeoutMs: 60_000 }, 90_000).then(track));
    // 12 suspended runs, each followed by an event stream until it completes.
    const runs = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call(`${server.url}/v1/responses`, key, { input: { script: [{ toolCalls: [{ name: "exec", arguments: { command: `echo ${i} >> s.txt` } }] }, { text: "done" }] } }).then(track)),
    );
    const streams = runs.map((r) => call(`${server.url}/v1/responses/${r.body?.id}/events?sessionId=${r.body?.sessionId}&after=-1`, key, undefined, 120_000).then(track));
    // Meanwhile the load driver runs its flows through the same two connections.
    const load = runLoad({ urls: [server.url], key, sessions: 50, concurrency: 20, durationMs: 120_000, duplicateShare: 0.3 });
    await new Promise((r) => setTimeout(r, 500));
    const answers = await Promise.all(ids.map((id, i) => call(`${server.url}/v1/gateway/question.resolve`, key, { id, answers: { [`q${i}`]: ["a"] } }).then(track)));
    const decisions = await Promise.all(runs.map((r) => call(`${server.url}/v1/approvals/${(r.body as { requiredAction: { id: string } }).requiredAction.id}`, key, { decision: "approve" }).then(track)));
    const [waited, streamed, result] = await Promise.all([Promise.all(waiters), Promise.all(streams), load]);

    const p99 = Object.entries(result.ops).map(([op, o]) => `${op} p99 ${o.p99.toFixed(0)} ms`).join(", ");
    console.info(`pool of 2: ${statuses.length} side requests (${statuses.filter((s) => s === 503).length} × 503), load ${result.flows.length} flows / ${result.requests} requests in ${(result.elapsedMs / 1000).toFixed(1)} s; ${p99}`);
    expect(statuses.filter((s) => !ALLOWED.has(s)), `unexpected statuses ${JSON.stringify(statuses)}`).toEqual([]);
    expect(result.errors, JSON.stringify(result.flows.filter((f) => f.outcome === "error").slice(0, 5))).toEqual({});
    expect(result.outcomes.error).toBe(0);
    // Acknowledged answers and decisions are applied, once.
    for (const [i, a] of answers.entries()) {
      if (a.status !== 200) continue;
      expect(a.body).toEqual({ ok: true, payload: { status: "answered", answers: { [`q${i}`]: ["a"] } } });
      expect(waited[i]?.body).toEqual({ ok: true, payload: { status: "answered", answers: { [`q${i}`]: ["a"] } } });
    }
    for (const [i, d] of decisions.entries()) {
      if (d.status !== 200) continue;
      expect(d.body?.status).toBe("completed");
      const frames = sseFrames(streamed[i]?.text ?? "");
      expect(frames.map((f) => f.sequence)).toEqual(frames.map((_, n) => n));
      expect(frames.at(-1)).toMatchObject({ type: "response.completed", status: "completed" });
    }
    const db = openQuery(database?.url as string);
    try {
      const acknowledged = result.flows.filter((f) => f.outcome === "completed" || f.outcome === "denied");
      expect(acknowledged.length).toBe(result.flows.length);
      for (const f of acknowledged) {
        const [row] = await db.sql`select status::text as status from responses where id = ${f.responseId as string}`;
        expect((row as { status: string }).status).toBe(f.outcome);
      }
    } finally {
      await db.close();
    }
    const sideEffects = checkSideEffects(result.flows, [dataDir]);
    expect(sideEffects.violations).toEqual([]);
    expect(sideEffects.checked).toBeGreaterThan(0);
    await expectAuditPasses(database?.url as string);
    expect(server.child.exitCode, server.output()).toBeNull();
  });
});
