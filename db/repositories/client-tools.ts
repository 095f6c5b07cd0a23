import { and, eq, lte, sql } from "drizzle-orm";
import type { TTransport } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { clientToolRequests } from "../schema";
import type { TDueQuery } from "./pending-expiry";

export type TClientToolRequestRow = typeof clientToolRequests.$inferSelect;

/** One client-tool request by id, whatever its status. */
export async function clientToolRequestById(db: Db, id: string): Promise<TClientToolRequestRow | null> {
  const [row] = await db.select().from(clientToolRequests).where(eq(clientToolRequests.id, id));
  return row ?? null;
}

/** The client-tool request `id` while it is still pending; null otherwise. */
export async function pendingClientToolRequest(db: Db, id: string): Promise<TClientToolRequestRow | null> {
  const [row] = await db.select().from(clientToolRequests).where(and(eq(clientToolRequests.id, id), eq(clientToolRequests.status, "pending")));
  return row ?? null;
}

/** The pending client-tool requests expired at `now`, as `(type, id)` rows for the expiry sweep. */
export const dueClientToolRequests = (now: Date): TDueQuery =>
  sql`select ${"client_tool"}::text as type, ${clientToolRequests.id} as id from ${clientToolRequests} where ${clientToolRequests.status} = 'pending' and ${clientToolRequests.expiresAt} <= ${now.toISOString()}::timestamptz`;

/** Expires the request `id` if it is still pending and due at `now`: the expired row, or null. */
export async function expireClientToolRequest(tx: Db, id: string, now: Date): Promise<TClientToolRequestRow | null> {
  const [row] = await tx
    .update(clientToolRequests)
    .set({ status: "expired" })
    .where(and(eq(clientToolRequests.id, id), eq(clientToolRequests.status, "pending"), lte(clientToolRequests.expiresAt, now)))
    .returning();
  return row ?? null;
}

/** Cancels every pending client-tool request of a response; returns their ids. */
export async function cancelPendingClientToolRequests(tx: Db, responseId: string): Promise<Array<{ id: string }>> {
  return tx
    .update(clientToolRequests)
    .set({ status: "cancelled" })
    .where(and(eq(clientToolRequests.responseId, responseId), eq(clientToolRequests.status, "pending")))
    .returning({ id: clientToolRequests.id });
}

/** Opens a client-tool request a run suspends on; returns it as stored. */
export async function openClientToolRequest(tx: Db, values: typeof clientToolRequests.$inferInsert): Promise<TClientToolRequestRow | null> {
  const [row] = await tx.insert(clientToolRequests).values(values).returning();
  return row ?? null;
}

/** Locks the client-tool request `id` (`for update`) for a submission; null when there is none. */
export async function lockClientToolRequest(tx: Db, id: string): Promise<TClientToolRequestRow | null> {
  const [row] = await tx.select().from(clientToolRequests).where(eq(clientToolRequests.id, id)).for("update");
  return row ?? null;
}

/** Marks a client-tool request submitted by a person, through a transport, at a time. */
export async function markClientToolSubmitted(tx: Db, id: string, by: { userId: string; via: TTransport; at: Date }): Promise<void> {
  await tx
    .update(clientToolRequests)
    .set({ status: "submitted", submittedBy: by.userId, submittedVia: by.via, submittedAt: by.at })
    .where(eq(clientToolRequests.id, id));
}

/** Stores the public output of a submitted client-tool request (what the run and records see). */
export async function storeClientToolPublicOutput(tx: Db, id: string, output: unknown): Promise<void> {
  await tx.update(clientToolRequests).set({ publicOutput: output }).where(eq(clientToolRequests.id, id));
}
