import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../client";
import { prepared, slot } from "../prepared";
import { steeringMessages } from "../schema";

export type TSteeringRow = typeof steeringMessages.$inferSelect;

/** Queues a steering message (its status defaults to `queued`). */
export async function insertSteeringMessage(tx: Db, values: Pick<typeof steeringMessages.$inferInsert, "id" | "responseId" | "sessionId" | "userId" | "text" | "authorityKind" | "via">): Promise<void> {
  await tx.insert(steeringMessages).values(values);
}

/** The messages still queued for a response, oldest first. */
export async function queuedSteeringOf(tx: Db, responseId: string): Promise<TSteeringRow[]> {
  return tx.select().from(steeringMessages).where(and(eq(steeringMessages.responseId, responseId), eq(steeringMessages.status, "queued"))).orderBy(asc(steeringMessages.createdAt));
}

/** Commits the still-queued messages among `ids` to model turn `turn`; returns the ids committed. */
export async function commitSteeringToTurn(tx: Db, ids: readonly string[], turn: number, at: Date): Promise<Array<{ id: string }>> {
  return tx
    .update(steeringMessages)
    .set({ status: "committed", committedTurn: turn, settledAt: at })
    .where(and(inArray(steeringMessages.id, [...ids]), eq(steeringMessages.status, "queued")))
    .returning({ id: steeringMessages.id });
}

/** Rejects one message for good if it is still queued; the row when it was. */
export async function rejectSteeringMessage(tx: Db, id: string, reason: string, at: Date): Promise<{ id: string } | null> {
  const [row] = await tx
    .update(steeringMessages)
    .set({ status: "rejected", reason, settledAt: at })
    .where(and(eq(steeringMessages.id, id), eq(steeringMessages.status, "queued")))
    .returning({ id: steeringMessages.id });
  return row ?? null;
}

/** Cancels the still-queued messages of a settling response; returns them (unordered). */
export const cancelQueuedSteeringMessages = prepared<{ id: string; at: Date }, Array<{ id: string; createdAt: Date }>>("cancel_queued_steering", (db) =>
  db
    .update(steeringMessages)
    .set({ status: "cancelled", reason: "The response settled before this message was used.", settledAt: slot("at", steeringMessages.settledAt) })
    .where(and(eq(steeringMessages.responseId, sql.placeholder("id")), eq(steeringMessages.status, "queued")))
    .returning({ id: steeringMessages.id, createdAt: steeringMessages.createdAt }),
);

/** Everyone who steered a response (distinct user ids). */
export async function steeringAuthorsOf(db: Db, responseId: string): Promise<string[]> {
  const rows = await db.selectDistinct({ userId: steeringMessages.userId }).from(steeringMessages).where(eq(steeringMessages.responseId, responseId));
  return rows.map((r) => r.userId);
}
