import { createHash } from "node:crypto";
import type { Db } from "../../db/client";
import { actorForKeyHash, actorForLiveKeyId, insertApiKey, type TKeyActor, touchKeyLastUsed } from "../../db/repositories/api-keys";
import type { TActor } from "../core/actor";
import { newId, newSecret } from "../core/ids";

const KEY_PREFIX = "cs_";

/** SHA-256 is enough here: keys are 256-bit random secrets, so there is nothing to brute-force. */
export const hashKey = (key: string): string => createHash("sha256").update(key).digest("hex");

/** Creates an API key for a user; the plain key is returned once and never stored. */
export async function createApiKey(db: Db, userId: string, name = "default"): Promise<{ id: string; apiKey: string }> {
  const apiKey = `${KEY_PREFIX}${newSecret(32)}`;
  const id = newId("key");
  await insertApiKey(db, { id, userId, name, keyHash: hashKey(apiKey), prefix: apiKey.slice(0, 10) });
  return { id, apiKey };
}

/** The actor behind an API key, and which key it is (long-lived connections re-check that key). */
export type { TKeyActor };

/**
 * The actor owning an unrevoked key of an active (not disabled, not deleted) user, or null: one
 * prepared query (key and user joined), on every API request.
 */
export async function actorForApiKey(db: Db, apiKey: string): Promise<TKeyActor | null> {
  if (!apiKey.startsWith(KEY_PREFIX) || apiKey.length > 200) return null;
  const [row] = await actorForKeyHash(db, { hash: hashKey(apiKey) });
  return row ?? null;
}

/** The actor owning the unrevoked key `keyId` of an active user, or null (an answer-link grant names its key by id). */
export async function actorForKeyId(db: Db, keyId: string): Promise<TActor | null> {
  return actorForLiveKeyId(db, keyId);
}

/** How often a key's `last_used_at` is written at most: the Admin page shows minutes, not requests. */
export const KEY_USE_RECORD_MS = 60_000;

/**
 * Records that a key authenticated at `at`: writes only when the stored time is older than
 * KEY_USE_RECORD_MS (or unset), so keys used by many replicas still cost one row write a minute.
 */
export async function recordKeyUse(db: Db, keyId: string, at: Date): Promise<void> {
  const stale = new Date(at.getTime() - KEY_USE_RECORD_MS);
  await touchKeyLastUsed(db, keyId, at, stale);
}
