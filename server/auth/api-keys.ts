import { createHash } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import { apiKeys } from "../../db/schema";
import { newId, newSecret } from "../core/ids";

const KEY_PREFIX = "cs_";

/** SHA-256 is enough here: keys are 256-bit random secrets, so there is nothing to brute-force. */
const hashKey = (key: string): string => createHash("sha256").update(key).digest("hex");

/** Creates an API key for a user; the plain key is returned once and never stored. */
export async function createApiKey(db: Db, userId: string, name = "default"): Promise<{ id: string; apiKey: string }> {
  const apiKey = `${KEY_PREFIX}${newSecret(32)}`;
  const id = newId("key");
  await db.insert(apiKeys).values({ id, userId, name, keyHash: hashKey(apiKey), prefix: apiKey.slice(0, 10) });
  return { id, apiKey };
}

/** The user owning an unrevoked key, or null. */
export async function userIdForApiKey(db: Db, apiKey: string): Promise<string | null> {
  if (!apiKey.startsWith(KEY_PREFIX) || apiKey.length > 200) return null;
  const [row] = await db
    .select({ userId: apiKeys.userId })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, hashKey(apiKey)), isNull(apiKeys.revokedAt)));
  return row?.userId ?? null;
}
