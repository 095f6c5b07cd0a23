import { and, asc, desc, eq, gt, isNotNull, sql } from "drizzle-orm";
import { type TFrame, type TNewEvent, toFrame } from "../../server/core/frames";
import type { Db } from "../client";
import { responseEvents, responses } from "../schema";

/**
 * Appends events to a response's trajectory inside the caller's transaction. Sequence numbers
 * come from counters on the response row, so the UPDATE also serializes concurrent writers.
 */
export async function appendEvents(tx: Db, responseId: string, events: readonly TNewEvent[]): Promise<TFrame[]> {
  if (events.length === 0) return [];
  const frameCount = events.filter((e) => e.frame).length;
  const [row] = await tx
    .update(responses)
    .set({
      nextSeq: sql`${responses.nextSeq} + ${events.length}`,
      nextFrameSeq: sql`${responses.nextFrameSeq} + ${frameCount}`,
      updatedAt: sql`now()`,
    })
    .where(eq(responses.id, responseId))
    .returning({ nextSeq: responses.nextSeq, nextFrameSeq: responses.nextFrameSeq, sessionId: responses.sessionId });
  if (!row) throw new Error(`appendEvents: response ${responseId} does not exist`);
  let seq = row.nextSeq - events.length;
  let frameSeq = row.nextFrameSeq - frameCount;
  const rows = events.map((e) => ({
    responseId,
    sessionId: row.sessionId,
    seq: seq++,
    frameSeq: e.frame ? frameSeq++ : null,
    type: e.type,
    data: e.data,
    actorUserId: e.actorUserId ?? null,
    transport: e.transport ?? null,
  }));
  await tx.insert(responseEvents).values(rows);
  return rows.flatMap((r) => (r.frameSeq === null ? [] : [toFrame({ ...r, frameSeq: r.frameSeq })]));
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
