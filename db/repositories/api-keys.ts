import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { TActor } from "../../server/core/actor";
import type { Db } from "../client";
import { prepared } from "../prepared";
import { apiKeys, users } from "../schema";

/** The actor behind an API key, and which key it is (long-lived connections re-check that key). */
export type TKeyActor = TActor & { keyId: string };

/** Stores a new API key: its SHA-256 and its readable prefix, never the key. */
export async function insertApiKey(db: Db, key: { id: string; userId: string; name: string; keyHash: string; prefix: string }): Promise<void> {
  await db.insert(apiKeys).values({ id: key.id, userId: key.userId, name: key.name, keyHash: key.keyHash, prefix: key.prefix });
}

/**
 * The actor owning the unrevoked key with this hash, if its user is active (not disabled, not
 * deleted): one prepared query (key and user joined), on every API request.
 */
export const actorForKeyHash = prepared<{ hash: string }, TKeyActor[]>("actor_for_api_key", (db) =>
  db
    .select({ userId: users.id, role: users.role, name: users.name, email: users.email, groups: users.groups, keyId: apiKeys.id })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(and(eq(apiKeys.keyHash, sql.placeholder("hash")), isNull(apiKeys.revokedAt), isNull(users.disabledAt), isNull(users.deletedAt))),
);

/** The actor owning the unrevoked key `keyId` of an active user, or null. */
export async function actorForLiveKeyId(db: Db, keyId: string): Promise<TActor | null> {
  const [row] = await db
    .select({ userId: users.id, role: users.role, name: users.name, email: users.email, groups: users.groups })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt), isNull(users.disabledAt), isNull(users.deletedAt)));
  return row ?? null;
}

/** Sets a key's `last_used_at` to `at` when the stored time is unset or older than `staleBefore`. */
export async function touchKeyLastUsed(db: Db, keyId: string, at: Date, staleBefore: Date): Promise<void> {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: at })
    .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, staleBefore))));
}
