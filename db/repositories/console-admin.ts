import { and, asc, desc, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { TRole } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { apiKeys, users } from "../schema";
import { beforeCursor, decodeCursor, exactTimestamp, toPage } from "./keyset";
import { statusOf } from "./user-status";

/** Where a keyset page starts (`cursor` from the previous page's `nextCursor`) and how many rows it holds. */
export type TPageRequest = { cursor?: string | null; limit: number };

/**
 * One page of users, newest first, with role, status (active, disabled, deleted) and how many
 * live API keys each holds.
 */
export async function listUsersPage(db: Db, page: TPageRequest) {
  const cursor = decodeCursor(page.cursor);
  const rows = await db
    .select({
      id: users.id,
      name: users.name,
      email: users.email,
      role: users.role,
      groups: users.groups,
      createdAt: users.createdAt,
      disabledAt: users.disabledAt,
      deletedAt: users.deletedAt,
      // A join, so drizzle qualifies every column (in a one-table select it writes a bare "id",
      // which inside a subquery named the key's own id: the count was always 0).
      activeKeys: sql<number>`(count(${apiKeys.id}) filter (where ${apiKeys.revokedAt} is null))::int`,
      cursorAt: exactTimestamp(users.createdAt),
    })
    .from(users)
    .leftJoin(apiKeys, eq(apiKeys.userId, users.id))
    .where(cursor ? beforeCursor(users.createdAt, users.id, cursor) : undefined)
    .groupBy(users.id)
    .orderBy(desc(users.createdAt), desc(users.id))
    .limit(page.limit + 1);
  const { rows: shown, nextCursor } = toPage(rows, page.limit);
  return {
    nextCursor,
    rows: shown.map(({ disabledAt, deletedAt, cursorAt: _, ...r }) => ({
      ...r,
      status: statusOf({ disabledAt, deletedAt }),
      activeKeys: Number(r.activeKeys),
      createdAt: r.createdAt.toISOString(),
    })),
  };
}

/** Every user (up to 1,000, newest first): the first page of {@link listUsersPage}. */
export const listUsers = async (db: Db) => (await listUsersPage(db, { limit: 1000 })).rows;

/** Names of users for filters (id, name and the email shown beside it). */
export async function listPeople(db: Db, onlyUserId: string | null) {
  return db
    .select({ id: users.id, name: users.name, email: users.email })
    .from(users)
    .where(onlyUserId ? eq(users.id, onlyUserId) : undefined)
    .orderBy(asc(users.name))
    .limit(1000);
}

export async function userById(db: Db, userId: string) {
  const [row] = await db.select({ id: users.id, name: users.name, email: users.email, role: users.role }).from(users).where(eq(users.id, userId));
  return row ?? null;
}

export async function setUserRole(db: Db, userId: string, role: TRole): Promise<void> {
  await db.update(users).set({ role, updatedAt: new Date() }).where(eq(users.id, userId));
}

/** One page of API keys (never their hashes), newest first; `userId` null lists every user's. */
export async function listApiKeysPage(db: Db, userId: string | null, page: TPageRequest) {
  const cursor = decodeCursor(page.cursor);
  const where: (SQL | undefined)[] = [userId ? eq(apiKeys.userId, userId) : undefined, cursor ? beforeCursor(apiKeys.createdAt, apiKeys.id, cursor) : undefined];
  const rows = await db
    .select({
      id: apiKeys.id,
      userId: apiKeys.userId,
      user: users.name,
      userEmail: users.email,
      name: apiKeys.name,
      prefix: apiKeys.prefix,
      createdAt: apiKeys.createdAt,
      lastUsedAt: apiKeys.lastUsedAt,
      revokedAt: apiKeys.revokedAt,
      cursorAt: exactTimestamp(apiKeys.createdAt),
    })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(and(...where))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    .limit(page.limit + 1);
  const { rows: shown, nextCursor } = toPage(rows, page.limit);
  return {
    nextCursor,
    rows: shown.map(({ cursorAt: _, ...r }) => ({
      ...r,
      createdAt: r.createdAt.toISOString(),
      lastUsedAt: r.lastUsedAt?.toISOString() ?? null,
      revokedAt: r.revokedAt?.toISOString() ?? null,
    })),
  };
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
