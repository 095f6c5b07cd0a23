import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../client";
import { agentSessions, approvals, responses } from "../schema";
import type { TApprovalRow } from "./approvals";
import type { TResponseRow } from "./responses";

/** The session an external approval names, whoever owns it; null when it does not exist. */
export async function sessionForRequest(db: Db, sessionId: string): Promise<typeof agentSessions.$inferSelect | null> {
  const [session] = await db.select().from(agentSessions).where(eq(agentSessions.id, sessionId));
  return session ?? null;
}

/** Stores the response record an external approval waits on (nothing runs on it). */
export async function insertExternalResponse(tx: Db, response: typeof responses.$inferInsert): Promise<TResponseRow | null> {
  const [row] = await tx.insert(responses).values(response).returning();
  return row ?? null;
}

/** Stores an external approval: the row, or null when the requester's idempotency key is taken already (nothing is stored). */
export async function insertExternalApproval(tx: Db, approval: typeof approvals.$inferInsert): Promise<TApprovalRow | null> {
  const [row] = await tx
    .insert(approvals)
    .values(approval)
    .onConflictDoNothing({ target: [approvals.userId, approvals.idempotencyKey] })
    .returning();
  return row ?? null;
}

/** The approval a requester created with this idempotency key; null when none. */
export async function approvalByIdempotencyKey(db: Db, userId: string, key: string): Promise<TApprovalRow | null> {
  const [row] = await db
    .select()
    .from(approvals)
    .where(and(eq(approvals.userId, userId), eq(approvals.idempotencyKey, key)));
  return row ?? null;
}

/**
 * Consumes an approved external approval of `userId` once, for the operation with binding `hash`:
 * the consumed row, or null when it is not (yet) approved, was consumed, or the hash differs.
 */
export async function consumeApprovedExternal(db: Db, consume: { id: string; userId: string; bindingHash: string; at: Date }): Promise<TApprovalRow | null> {
  const [used] = await db
    .update(approvals)
    .set({ consumedAt: consume.at })
    .where(
      and(
        eq(approvals.id, consume.id),
        eq(approvals.userId, consume.userId),
        eq(approvals.external, true),
        eq(approvals.status, "approved"),
        eq(approvals.bindingHash, consume.bindingHash),
        isNull(approvals.consumedAt),
      ),
    )
    .returning();
  return used ?? null;
}
