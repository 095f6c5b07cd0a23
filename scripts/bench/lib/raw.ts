import { randomBytes } from "node:crypto";
import type { TRaw } from "./env";
import { runLoad } from "./http";
import { now, percentile, sleep } from "./stats";

/**
 * The physical limits of a decision and of a suspension: the same statements the server needs
 * at minimum, on scratch tables, through the bare driver (no ORM, no HTTP, no auth).
 */
const SCHEMA = `
create table if not exists bench_approvals (id text primary key, response_id text not null, status text not null default 'pending', decided_by text, decided_at timestamptz);
create table if not exists bench_responses (id text primary key, status text not null, input jsonb not null, next_seq int not null default 0, created_at timestamptz not null default now());
create table if not exists bench_events (id bigserial primary key, response_id text not null, seq int not null, type text not null, data jsonb not null, created_at timestamptz not null default now());
create index if not exists bench_events_resp on bench_events (response_id, seq);
`;

const INPUT = { script: [{ toolCalls: [{ name: "exec", arguments: { command: "true" } }] }, { toolCalls: [{ name: "echo", arguments: { text: "done" } }] }] };

export async function prepareScratch(raw: TRaw): Promise<void> {
  await raw.exec(SCHEMA);
}

async function pendingRows(raw: TRaw, n: number): Promise<string[]> {
  const prefix = `a_${randomBytes(4).toString("hex")}_`;
  await raw.query(`insert into bench_approvals (id, response_id) select $1 || g, 'r' || g from generate_series(1, $2::int) g`, [prefix, n]);
  return Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
}

/** BEGIN / UPDATE … WHERE status='pending' RETURNING / INSERT event / COMMIT. */
async function decideOnce(raw: TRaw, id: string): Promise<void> {
  await raw.tx(async (q) => {
    const [row] = await q(`update bench_approvals set status = 'approved', decided_by = $2, decided_at = now() where id = $1 and status = 'pending' returning response_id`, [id, "user_bench"]);
    if (!row) throw new Error(`raw decide lost ${id}`);
    await q(`insert into bench_events (response_id, seq, type, data) values ($1, 0, 'approval.resolved', $2)`, [row.response_id, JSON.stringify({ approvalId: id, decision: "approve" })]);
  });
}

/** Each decide's time, one after the other on one connection; `idleMs`: the wait before each (not timed). */
async function timedDecides(raw: TRaw, ids: readonly string[], idleMs = 0): Promise<number[]> {
  const latencies: number[] = [];
  for (const id of ids) {
    if (idleMs > 0) await sleep(idleMs);
    const t0 = now();
    await decideOnce(raw, id);
    latencies.push(now() - t0);
  }
  return latencies;
}

/** Raw decide: p50/p99 on one connection, and decisions/s with `concurrency` callers. */
export async function rawDecide(raw: TRaw, options: { single: number; concurrent: number; concurrency: number; warmup?: number }) {
  const warm = await pendingRows(raw, options.warmup ?? 50);
  for (const id of warm) await decideOnce(raw, id);
  const latencies = await timedDecides(raw, await pendingRows(raw, options.single));
  const many = await pendingRows(raw, options.concurrent);
  const load = await runLoad({ concurrency: options.concurrency, total: many.length, task: (i) => decideOnce(raw, many[i] as string) });
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), perSecond: load.perSecond, concurrentP99: percentile(load.latencies, 99) };
}

/**
 * Raw decide after an idle wait: each of `n` decides starts `idleMs` after the previous one ended,
 * as the server's commit after an approved command starts after its wait for the command. p50.
 */
export async function rawDecideAfterIdle(raw: TRaw, n: number, idleMs: number): Promise<{ p50: number }> {
  return { p50: percentile(await timedDecides(raw, await pendingRows(raw, n), idleMs), 50) };
}

/**
 * Raw suspend: the two commits a suspension needs at minimum — create (response + event) and
 * suspend (pending approval + status + event) — one connection, p50/p99.
 */
export async function rawSuspend(raw: TRaw, n: number) {
  const prefix = `r_${randomBytes(4).toString("hex")}_`;
  const latencies: number[] = [];
  for (let i = 0; i < n + 20; i++) {
    const id = `${prefix}${i}`;
    const t0 = now();
    await raw.tx(async (q) => {
      await q(`insert into bench_responses (id, status, input) values ($1, 'in_progress', $2)`, [id, JSON.stringify(INPUT)]);
      await q(`insert into bench_events (response_id, seq, type, data) values ($1, 0, 'response.created', '{}')`, [id]);
    });
    await raw.tx(async (q) => {
      await q(`insert into bench_approvals (id, response_id) values ($1, $2)`, [`ap_${id}`, id]);
      await q(`update bench_responses set status = 'requires_action', next_seq = next_seq + 2 where id = $1`, [id]);
      await q(`insert into bench_events (response_id, seq, type, data) values ($1, 1, 'approval.requested', $2), ($1, 2, 'response.completed', $2)`, [id, JSON.stringify({ input: INPUT })]);
    });
    if (i >= 20) latencies.push(now() - t0);
  }
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}
