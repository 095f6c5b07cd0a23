import { and, asc, desc, eq, gt, isNull, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";
import { grants, users } from "../schema";
import { beforeCursor, exactTimestamp, type TKeysetCursor } from "./keyset";

export type TGrantRow = typeof grants.$inferSelect;
export type TNewGrant = typeof grants.$inferInsert;

/** Stores a standing grant (created by an approval's decision, in its transaction). */
export async function insertGrant(tx: Db, grant: TNewGrant): Promise<void> {
  await tx.insert(grants).values(grant);
}

/** One grant by id; null when it does not exist. */
export async function grantById(db: Db, grantId: string): Promise<TGrantRow | null> {
  const [grant] = await db.select().from(grants).where(eq(grants.id, grantId));
  return grant ?? null;
}

/**
 * Up to `limit` grants newest first with their owner's name and email (only `userId`'s when not
 * null; only those still active at `activeAt` when given), before `cursor` when given.
 */
export async function grantsPage(db: Db, filter: { userId: string | null; activeAt: Date | null; cursor: TKeysetCursor | null; limit: number }) {
  const where: SQL[] = [];
  if (filter.userId) where.push(eq(grants.userId, filter.userId));
  if (filter.activeAt) {
    where.push(isNull(grants.revokedAt), or(isNull(grants.expiresAt), gt(grants.expiresAt, filter.activeAt)) as SQL);
  }
  if (filter.cursor) where.push(beforeCursor(grants.createdAt, grants.id, filter.cursor));
  return db
    .select({ grant: grants, userName: users.name, userEmail: users.email, cursorAt: exactTimestamp(grants.createdAt) })
    .from(grants)
    .leftJoin(users, eq(users.id, grants.userId))
    .where(and(...where))
    .orderBy(desc(grants.createdAt), desc(grants.id))
    .limit(filter.limit);
}

/** Revokes a grant that is not revoked yet: the revoked row, or null when it was revoked already. */
export async function revokeActiveGrant(tx: Db, grantId: string, at: Date, by: string): Promise<TGrantRow | null> {
  const [row] = await tx
    .update(grants)
    .set({ revokedAt: at, revokedBy: by })
    .where(and(eq(grants.id, grantId), isNull(grants.revokedAt)))
    .returning();
  return row ?? null;
}

/**
 * Uses a standing grant for this exact operation, inside the caller's transaction: the oldest
 * active matching grant is locked and counted. A revocation that committed first is seen here (the
 * grant no longer matches); one that comes later waits for this transaction.
 */
export async function claimGrant(
  tx: Db,
  match: { userId: string; agent: string; operationHash: string; sessionId: string; scopes: ReadonlyArray<"session" | "days">; now: Date },
): Promise<TGrantRow | null> {
  const [candidate] = await tx
    .select({ id: grants.id })
    .from(grants)
    .where(
      and(
        eq(grants.userId, match.userId),
        eq(grants.agent, match.agent),
        eq(grants.operationHash, match.operationHash),
        isNull(grants.revokedAt),
        or(
          match.scopes.includes("session") ? and(eq(grants.scope, "session"), eq(grants.sessionId, match.sessionId)) : undefined,
          match.scopes.includes("days") ? and(eq(grants.scope, "days"), gt(grants.expiresAt, match.now)) : undefined,
        ),
      ),
    )
    .orderBy(asc(grants.createdAt))
    .limit(1)
    .for("update");
  if (!candidate) return null;
  const [used] = await tx
    .update(grants)
    .set({ uses: sql`${grants.uses} + 1`, lastUsedAt: match.now })
    .where(and(eq(grants.id, candidate.id), isNull(grants.revokedAt)))
    .returning();
  return used ?? null;
}
