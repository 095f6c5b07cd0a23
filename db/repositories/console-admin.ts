import { and, asc, desc, eq, isNull, sql } from "drizzle-orm";
import type { TRole } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { apiKeys, users } from "../schema";
import { statusOf } from "./user-status";

/** Every user with its role, status (active, disabled, deleted) and how many live API keys it holds. */
export async function listUsers(db: Db) {
  const rows = await db
    .select({
      id: users.id,
      name: users.name,
      email: users.email,
      role: users.role,
      createdAt: users.createdAt,
      disabledAt: users.disabledAt,
      deletedAt: users.deletedAt,
      // A join, so drizzle qualifies every column (in a one-table select it writes a bare "id",
      // which inside a subquery named the key's own id: the count was always 0).
      activeKeys: sql<number>`(count(${apiKeys.id}) filter (where ${apiKeys.revokedAt} is null))::int`,
    })
    .from(users)
    .leftJoin(apiKeys, eq(apiKeys.userId, users.id))
    .groupBy(users.id)
    .orderBy(asc(users.name))
    .limit(1000);
  return rows.map(({ disabledAt, deletedAt, ...r }) => ({
    ...r,
    status: statusOf({ disabledAt, deletedAt }),
    activeKeys: Number(r.activeKeys),
    createdAt: r.createdAt.toISOString(),
  }));
}

/** Names of users for filters (id and name only). */
export async function listPeople(db: Db, onlyUserId: string | null) {
  return db
    .select({ id: users.id, name: users.name })
    .from(users)
    .where(onlyUserId ? eq(users.id, onlyUserId) : undefined)
    .orderBy(asc(users.name))
    .limit(1000);
}

export async function userById(db: Db, userId: string) {
  const [row] = await db.select({ id: users.id, name: users.name, role: users.role }).from(users).where(eq(users.id, userId));
  return row ?? null;
}

export async function setUserRole(db: Db, userId: string, role: TRole): Promise<void> {
  await db.update(users).set({ role, updatedAt: new Date() }).where(eq(users.id, userId));
}

/** API keys (never their hashes), newest first; `userId` null lists every user's. */
export async function listApiKeys(db: Db, userId: string | null) {
  const rows = await db
    .select({
      id: apiKeys.id,
      userId: apiKeys.userId,
      user: users.name,
      name: apiKeys.name,
      prefix: apiKeys.prefix,
      createdAt: apiKeys.createdAt,
      lastUsedAt: apiKeys.lastUsedAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(userId ? eq(apiKeys.userId, userId) : undefined)
    .orderBy(desc(apiKeys.createdAt))
    .limit(1000);
  return rows.map((r) => ({
    ...r,
    createdAt: r.createdAt.toISOString(),
    lastUsedAt: r.lastUsedAt?.toISOString() ?? null,
    revokedAt: r.revokedAt?.toISOString() ?? null,
  }));
}

export async function apiKeyById(db: Db, keyId: string) {
  const [row] = await db.select({ id: apiKeys.id, userId: apiKeys.userId, revokedAt: apiKeys.revokedAt }).from(apiKeys).where(eq(apiKeys.id, keyId));
  return row ?? null;
}

/** Revokes a key once; returns false when it was already revoked. */
export async function revokeApiKey(db: Db, keyId: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return rows.length > 0;
}
