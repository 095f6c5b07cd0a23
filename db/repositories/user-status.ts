import { and, eq, isNull, sql } from "drizzle-orm";
import type { TRole, TUserStatus } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { accounts, apiKeys, loginSessions, users } from "../schema";

/** Where a user stands: `active`, `disabled` (reversible), `deleted` (credentials gone for good). */
export type { TUserStatus };

export const statusOf = (row: { disabledAt: Date | null; deletedAt: Date | null }): TUserStatus => (row.deletedAt ? "deleted" : row.disabledAt ? "disabled" : "active");

/** A user as the admin rules need it. */
export async function userForAdmin(db: Db, userId: string): Promise<{ id: string; name: string; email: string; role: TRole; status: TUserStatus } | null> {
  const [row] = await db
    .select({ id: users.id, name: users.name, email: users.email, role: users.role, disabledAt: users.disabledAt, deletedAt: users.deletedAt })
    .from(users)
    .where(eq(users.id, userId));
  return row ? { id: row.id, name: row.name, email: row.email, role: row.role, status: statusOf(row) } : null;
}

/**
 * Active admins (not disabled, not deleted), their rows locked until the transaction ends: two
 * admins removing each other at the same moment cannot leave the workspace without one.
 */
export async function lockActiveAdmins(tx: Db): Promise<string[]> {
  const rows = await tx
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.role, "admin"), isNull(users.disabledAt), isNull(users.deletedAt)))
    .for("update");
  return rows.map((r) => r.id);
}

/** Disables an active user and ends its console sessions; false when it was not active. */
export async function markDisabled(tx: Db, userId: string, now: Date): Promise<boolean> {
  const rows = await tx
    .update(users)
    .set({ disabledAt: now, updatedAt: now })
    .where(and(eq(users.id, userId), isNull(users.disabledAt), isNull(users.deletedAt)))
    .returning({ id: users.id });
  if (rows.length === 0) return false;
  await tx.delete(loginSessions).where(eq(loginSessions.userId, userId));
  return true;
}

/**
 * Offboards a user who is not deleted: disabled (if it was not), every console session ended and
 * every API key revoked, for good. Null when the user is deleted; else what it ended.
 */
export async function markOffboarded(tx: Db, userId: string, now: Date): Promise<{ sessionsEnded: number; keysRevoked: number } | null> {
  const rows = await tx
    .update(users)
    .set({ disabledAt: sql`coalesce(${users.disabledAt}, ${now.toISOString()}::timestamptz)`, updatedAt: now })
    .where(and(eq(users.id, userId), isNull(users.deletedAt)))
    .returning({ id: users.id });
  if (rows.length === 0) return null;
  const keys = await tx.update(apiKeys).set({ revokedAt: now }).where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt))).returning({ id: apiKeys.id });
  const sessions = await tx.delete(loginSessions).where(eq(loginSessions.userId, userId)).returning({ id: loginSessions.id });
  return { sessionsEnded: sessions.length, keysRevoked: keys.length };
}

/** Enables a disabled (not deleted) user; false when it was not disabled. */
export async function markEnabled(tx: Db, userId: string, now: Date): Promise<boolean> {
  const rows = await tx
    .update(users)
    .set({ disabledAt: null, updatedAt: now })
    .where(and(eq(users.id, userId), isNull(users.deletedAt), sql`${users.disabledAt} is not null`))
    .returning({ id: users.id });
  return rows.length > 0;
}

/** The address a deleted user's email is replaced with: unique, unroutable, and never a login. */
export const deletedEmail = (userId: string): string => `deleted+${userId.toLowerCase()}@deleted.invalid`;

/**
 * Deletes a user's credentials for good and keeps the row (id, name, role, dates) so the history
 * that points at it stays readable: API keys revoked (kept as revoked rows), login sessions and
 * password accounts removed, the email replaced so it can be used again. False when already deleted.
 */
export async function markDeleted(tx: Db, userId: string, now: Date): Promise<boolean> {
  const rows = await tx
    .update(users)
    .set({ deletedAt: now, email: deletedEmail(userId), image: null, updatedAt: now })
    .where(and(eq(users.id, userId), isNull(users.deletedAt)))
    .returning({ id: users.id });
  if (rows.length === 0) return false;
  await tx.update(apiKeys).set({ revokedAt: now }).where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)));
  await tx.delete(loginSessions).where(eq(loginSessions.userId, userId));
  await tx.delete(accounts).where(eq(accounts.userId, userId));
  return true;
}
