import { and, asc, desc, eq, gt, isNotNull, sql } from "drizzle-orm";
import { type TFrame, type TNewEvent, toFrame } from "../../server/core/frames";
import { type Db, rowsOf } from "../client";
import { responseEvents } from "../schema";

/**
 * Appends events to a response's trajectory in ONE call: `append_response_events` (migration 0021)
 * advances the counters on the response row (which also serializes concurrent writers) and inserts
 * the rows numbered from them. Atomic on its own, so a caller without other writes needs no
 * transaction; inside the caller's transaction it commits with it.
 */
export async function appendEvents(tx: Db, responseId: string, events: readonly TNewEvent[]): Promise<TFrame[]> {
  if (events.length === 0) return [];
  let frameOrdinal = 0;
  const rows = events.map((e, o) => ({ o, f: e.frame ? frameOrdinal++ : null, t: e.type, d: e.data, a: e.actorUserId ?? null, tr: e.transport ?? null }));
  const frameCount = frameOrdinal;
  const result = (await tx.execute(sql`select session_id, frame_base from append_response_events(${responseId}, ${JSON.stringify(rows)}::jsonb, ${events.length}::int, ${frameCount}::int)`)) as unknown;
  const [counters] = rowsOf<{ session_id: string; frame_base: number }>(result);
  if (!counters) throw new Error(`appendEvents: response ${responseId} does not exist`);
  const { session_id: sessionId, frame_base: frameBase } = counters;
  return rows.flatMap((r) => (r.f === null ? [] : [toFrame({ type: r.t, frameSeq: frameBase + r.f, responseId, sessionId, data: r.d })]));
}

/** Stored frames of a response after `afterSequence`, in order. */
export async function framesAfter(db: Db, responseId: string, afterSequence: number): Promise<TFrame[]> {
  const rows = await db
    .select()
    .from(responseEvents)
    .where(
      and(
        eq(responseEvents.responseId, responseId),
        isNotNull(responseEvents.frameSeq),
        gt(responseEvents.frameSeq, afterSequence),
      ),
    )
    .orderBy(asc(responseEvents.frameSeq));
  return rows.map((r) => toFrame({ ...r, frameSeq: r.frameSeq ?? 0 }));
}

/** The first boundary frame (`response.completed`) after `afterSequence`, if stored. */
export async function boundaryAfter(db: Db, responseId: string, afterSequence: number): Promise<TFrame | null> {
  const [row] = await db
    .select()
    .from(responseEvents)
    .where(
      and(
        eq(responseEvents.responseId, responseId),
        eq(responseEvents.type, "response.completed"),
        gt(responseEvents.frameSeq, afterSequence),
      ),
    )
    .orderBy(asc(responseEvents.frameSeq))
    .limit(1);
  return row ? toFrame({ ...row, frameSeq: row.frameSeq ?? 0 }) : null;
}

/** The whole trajectory of a response (every event, frames or not), in order. */
/**
 * The last `limit` events of a response, in order, and how many it has in all (`seq` is gap-free
 * from 0, so the newest `seq` + 1). Bounded, so a response with a long trajectory costs the same;
 * the audit procedures page through all of it.
 */
export async function trajectoryTail(db: Db, responseId: string, limit: number) {
  const newestFirst = await db.select().from(responseEvents).where(eq(responseEvents.responseId, responseId)).orderBy(desc(responseEvents.seq)).limit(limit);
  const total = newestFirst[0] ? newestFirst[0].seq + 1 : 0;
  return { events: newestFirst.reverse(), total };
}

export async function trajectoryOf(db: Db, responseId: string) {
  return db.select().from(responseEvents).where(eq(responseEvents.responseId, responseId)).orderBy(asc(responseEvents.seq));
}

/**
 * The first `limit` events of a response in order, and whether more exist (read one past the
 * limit to know). The timeline builds from these.
 */
export async function trajectoryHead(db: Db, responseId: string, limit: number) {
  const rows = await db.select().from(responseEvents).where(eq(responseEvents.responseId, responseId)).orderBy(asc(responseEvents.seq)).limit(limit + 1);
  return { events: rows.slice(0, limit), more: rows.length > limit };
}
