import postgres from "postgres";
import { freshDatabase, size, startServer, type TCtx } from "./lib/env";
import { Client } from "./lib/http";
import type { TOutcome, TRow } from "./lib/stats";
import { startWireCounter, type TWireCounts } from "./lib/wire-counter";

/** The script the engine issue measures: `exec` needing approval → `echo` → text. */
export const HITL_SCRIPT = {
  input: {
    script: [{ toolCalls: [{ name: "exec", arguments: { command: "true" } }] }, { toolCalls: [{ name: "echo", arguments: { text: "done" } }] }, { text: "Done." }],
  },
};

type TEnvelope = { id: string; status: string; requiredAction?: { id: string } | null };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Commits per suspension and per approval round trip, read from `pg_stat_database.xact_commit`
 * of a database nothing else uses (one server process on a fresh database). Every committed
 * transaction counts, read-only ones included (an autocommit SELECT is a transaction too).
 * The server's own background work (expiry sweep, lease and orphan checks) is measured while
 * idle for the same time and subtracted; the counter's own reads are subtracted too.
 */
export async function benchCommits(ctx: TCtx): Promise<TOutcome> {
  if (ctx.kind !== "postgres") return { rows: [] };
  const fresh = await freshDatabase(ctx);
  // The server reaches the database through a relay that counts its statements and its waits for replies.
  const wire = await startWireCounter(fresh.url as string);
  // Background work is not per-run work: the production lease (15 s, not the test servers' 2 s) and
  // a slow expiry sweep keep the server's own periodic commits out of the counts (the rest is subtracted).
  const server = await startServer({ ...fresh, url: wire.url }, { COUNTERSIGN_LEASE_MS: "15000", COUNTERSIGN_EXPIRY_SWEEP_MS: "60000" });
  const stats = postgres(fresh.url as string, { max: 1, onnotice: () => {} });
  const name = new URL(fresh.url as string).pathname.slice(1);
  try {
    // Autovacuum and autoanalyze commit in this database too, in bursts nothing here controls:
    // off for its tables, so what is counted is the server's work.
    for (const { t } of await stats<{ t: string }[]>`select tablename as t from pg_tables where schemaname = 'public'`) {
      await stats.unsafe(`alter table "${t}" set (autovacuum_enabled = false, toast.autovacuum_enabled = false)`);
    }
    const client = new Client(server.url, server.key, 1);
    // Backends report their counters when idle, at most once a second: settle, then read.
    // The relay's counts at each read, by the commit count read there.
    const wireAt = new Map<number, TWireCounts>();
    const read = async (settleMs = 1500): Promise<number> => {
      await sleep(settleMs);
      await stats`select pg_stat_clear_snapshot()`;
      const [row] = await stats`select xact_commit::bigint as n from pg_stat_database where datname = ${name}`;
      const n = Number(row?.n);
      wireAt.set(n, wire.counts());
      return n;
    };
    const suspend = async () => {
      const env = await client.json<TEnvelope>("POST", "/v1/responses", HITL_SCRIPT);
      if (env.status !== "requires_action" || !env.requiredAction) throw new Error(`expected requires_action, got ${env.status}`);
      return env.requiredAction.id;
    };
    const approve = async (id: string) => {
      const env = await client.json<TEnvelope>("POST", `/v1/approvals/${id}`, { decision: "approve" });
      if (env.status !== "completed") throw new Error(`expected completed, got ${env.status}`);
    };
    // Warm up: first-use work (prepared statements, the demo key's first lookup) is not per run.
    await approve(await suspend());
    const n = size(ctx, 100, 10);
    // Each read costs two commits of its own (clear snapshot, select) on the stats connection.
    const OWN = 2;
    // The idle rate over a longer window (expiry sweep, orphan checks): it is subtracted from both phases.
    // PostgreSQL's own visits (autovacuum workers) commit here too, at random: measured before and after, averaged.
    const idleWire = { statements: 0, waits: 0, ms: 0 };
    const idleRate = async () => {
      const a = await read();
      const t = performance.now();
      const b = await read(8000);
      const ms = performance.now() - t;
      const [wa, wb] = [wireAt.get(a), wireAt.get(b)];
      if (wa && wb) {
        idleWire.statements += wb.statements - wa.statements;
        idleWire.waits += wb.waits - wa.waits;
        idleWire.ms += ms;
      }
      return Math.max(0, b - a - OWN) / ms;
    };
    const idleBefore = await idleRate();

    const before = await read();
    const s0 = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(await suspend());
    const afterSuspend = await read();
    const s1 = performance.now();
    for (const id of ids) await approve(id);
    const afterApprove = await read();
    const s2 = performance.now();
    client.close();
    const idlePerMs = (idleBefore + (await idleRate())) / 2;

    const perRun = (delta: number, ms: number) => (delta - OWN - idlePerMs * ms) / n;
    const suspendCommits = perRun(afterSuspend - before, s1 - s0);
    const roundTripCommits = perRun(afterApprove - afterSuspend, s2 - s1);
    // The same for the relay's counts (the stats connection does not go through it, so nothing of its own).
    const wirePerRun = (from: number, to: number, ms: number, key: keyof TWireCounts) => {
      const [a, b] = [wireAt.get(from), wireAt.get(to)];
      if (!a || !b || idleWire.ms === 0) return Number.NaN;
      return (b[key] - a[key] - (idleWire[key] / idleWire.ms) * ms) / n;
    };
    const bench = "commits per human-in-the-loop cycle";
    const note = `pg_stat_database.xact_commit, ${n} runs, idle background ${(idlePerMs * 1000).toFixed(2)}/s subtracted`;
    const rows: TRow[] = [
      { bench, db: ctx.kind, measure: "suspend (POST /v1/responses → requires_action)", value: suspendCommits, unit: "commits", target: { kind: "maxValue", x: 2 }, note },
      { bench, db: ctx.kind, measure: "approval round trip (approve → completed)", value: roundTripCommits, unit: "commits", target: { kind: "maxValue", x: 4 }, note },
      { bench, db: ctx.kind, measure: "suspend: statements sent to the database", value: wirePerRun(before, afterSuspend, s1 - s0, "statements"), unit: "statements" },
      { bench, db: ctx.kind, measure: "suspend: waits for the database (client round trips; a pipelined batch is one)", value: wirePerRun(before, afterSuspend, s1 - s0, "waits"), unit: "waits" },
      { bench, db: ctx.kind, measure: "approval round trip: statements sent to the database", value: wirePerRun(afterSuspend, afterApprove, s2 - s1, "statements"), unit: "statements" },
      { bench, db: ctx.kind, measure: "approval round trip: waits for the database (client round trips; a pipelined batch is one)", value: wirePerRun(afterSuspend, afterApprove, s2 - s1, "waits"), unit: "waits" },
    ];
    return { rows, notes: [`${bench}: ${note}; suspend ${suspendCommits.toFixed(2)}, round trip ${roundTripCommits.toFixed(2)}`] };
  } finally {
    await stats.end({ timeout: 5 });
    await server.stop();
    await wire.close();
    await fresh.drop();
  }
}
