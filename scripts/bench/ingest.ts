import { type DbHandle, migrateDb, openDb } from "../../db/client";
import { recordEvents } from "../../server/host/transact";
import type { TNewEvent } from "../../server/core/frames";
import { freshDatabase, openRaw, rawFromPglite, type TCtx, type TRaw, size } from "./lib/env";
import { now, type TRow } from "./lib/stats";

const WRITERS = 4;

/** One step's worth of events, as the model loop records them (tool call frame, usage, model.turn event…). */
function batchOf(b: number, k: number): TNewEvent[] {
  return Array.from({ length: b }, (_, i) =>
    i % 4 === 3
      ? { type: "model.turn", data: { turn: k, textChars: 120, reasoningChars: 0, toolCalls: ["exec"], outputTokens: 42 }, frame: false }
      : { type: "response.tool_call", data: { id: `call_${k}_${i}`, name: "exec", arguments: { command: `echo step ${k} ${i} && ls -la /tmp` } }, frame: true },
  );
}

async function seed(raw: TRaw, writers: number): Promise<string[]> {
  await raw.exec(`
    insert into users (id, name, email, role) values ('user_ingest', 'Ingest', 'ingest@bench.local', 'operator');
    insert into agent_sessions (id, user_id, agent, workspace_dir) values ('sess_ingest', 'user_ingest', 'scripted', '/tmp');
    create table if not exists bench_raw_events (like response_events including defaults including indexes);`);
  const ids = Array.from({ length: writers }, (_, i) => `resp_ingest_${Date.now()}_${i}`);
  for (const id of ids) {
    await raw.query(`insert into responses (id, session_id, user_id, agent, status, input, approval_ttl_ms, client_tool_ttl_ms) values ($1, 'sess_ingest', 'user_ingest', 'scripted', 'in_progress', '{}', 900000, 300000)`, [id]);
  }
  return ids;
}

/** `ids.length` writers, each appending only to its own response (as one attempt does); events/s. */
async function perWriter(ids: string[], total: number, b: number, write: (id: string, k: number) => Promise<void>): Promise<number> {
  const perWriterTx = Math.max(1, Math.floor(total / b / ids.length));
  const t0 = now();
  await Promise.all(ids.map(async (id, w) => {
    for (let i = 0; i < perWriterTx; i++) await write(id, w * perWriterTx + i);
  }));
  return (perWriterTx * ids.length * b * 1000) / (now() - t0);
}

/**
 * The host path: what the trajectory capability's flush calls, `recordEvents` (one statement:
 * counter UPDATE + multi-row INSERT in a CTE; frames then go to the bus, a no-op here).
 */
const hostPath = (handle: DbHandle, ids: string[], total: number, b: number) => {
  const deps = { db: handle.db, bus: { publishFrames: () => {} } } as unknown as Parameters<typeof recordEvents>[0];
  return perWriter(ids, total, b, (id, k) => recordEvents(deps, id, batchOf(b, k)));
};

/** Next seq per response in the scratch table (shared across calls so rows never collide). */
const seqs = new Map<string, number>();

/** The same rows through the bare driver: one multi-row INSERT per batch, no transaction, no counter. */
function rawPath(raw: TRaw, ids: string[], total: number, b: number) {
  const placeholders = Array.from({ length: b }, (_, i) => `($${i * 6 + 1}, $${i * 6 + 2}, $${i * 6 + 3}, $${i * 6 + 4}, $${i * 6 + 5}, $${i * 6 + 6})`).join(", ");
  const text = `insert into bench_raw_events (response_id, session_id, seq, frame_seq, type, data) values ${placeholders}`;
  return perWriter(ids, total, b, async (id, k) => {
    const start = seqs.get(id) ?? 0;
    seqs.set(id, start + b);
    const params = batchOf(b, k).flatMap((e, i) => [id, "sess_ingest", start + i, e.frame ? start + i : null, e.type, JSON.stringify(e.data)]);
    await raw.query(text, params);
  });
}

/** Item 4: trajectory ingest, host append path vs raw batched insert of the same rows, at two batch sizes. */
export async function benchIngest(ctx: TCtx): Promise<TRow[]> {
  const fresh = await freshDatabase(ctx);
  const handle = await openDb({ url: fresh.url, dataDir: fresh.url ? undefined : fresh.pgliteDir, poolSize: 10 });
  await migrateDb(handle);
  const raw = handle.pglite ? rawFromPglite(handle.pglite) : await openRaw(fresh, { max: 10 });
  try {
    const ids = await seed(raw, WRITERS);
    const rows: TRow[] = [];
    for (const [b, total] of [
      [4, size(ctx, 40_000, 2_000)],
      [100, size(ctx, 100_000, 4_000)],
    ] as const) {
      await hostPath(handle, ids, Math.min(total, b * 50), b);
      await rawPath(raw, ids, Math.min(total, b * 50), b);
      const host = await hostPath(handle, ids, total, b);
      const base = await rawPath(raw, ids, total, b);
      rows.push({
        bench: "4 trajectory ingest",
        db: ctx.kind,
        measure: `recordEvents (trajectory flush), ${b} events per batch, ${WRITERS} writers`,
        value: host,
        unit: "events/s",
        limit: base,
        limitLabel: `raw INSERT of ${b} rows`,
        target: { kind: "minRatio", x: 0.5 },
      });
    }
    return rows;
  } finally {
    if (handle.kind === "postgres") await raw.close();
    await handle.close();
    await fresh.drop();
  }
}
