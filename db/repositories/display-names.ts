import { and, asc, eq, isNull, ne, or } from "drizzle-orm";
import { displayNameKey } from "../../server/core/display-name";
import type { Db } from "../client";
import { users } from "../schema";

/** The unique index that keeps two users who are not deleted from sharing a display name. */
export const NAME_KEY_INDEX = "users_name_key_idx";

/** Did this error come from the unique index on display names (a concurrent writer took the name first)? */
export function isNameKeyViolation(error: unknown): boolean {
  for (let e = error as { code?: unknown; constraint?: unknown; constraint_name?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (e.code === "23505" && (e.constraint_name === NAME_KEY_INDEX || e.constraint === NAME_KEY_INDEX)) return true;
  }
  return false;
}

/**
 * Another user (not deleted, not `exceptUserId`) whose display name is the same as `name` by
 * {@link displayNameKey}, or null. Users whose key was never written (they shared a name when keys
 * were introduced) are compared by their name's key computed here.
 */
export async function nameHolder(db: Db, name: string, exceptUserId?: string): Promise<{ id: string; name: string } | null> {
  const key = displayNameKey(name);
  const rows = await db
    .select({ id: users.id, name: users.name })
    .from(users)
    .where(and(isNull(users.deletedAt), or(eq(users.nameKey, key), isNull(users.nameKey)), exceptUserId ? ne(users.id, exceptUserId) : undefined));
  return rows.find((r) => displayNameKey(r.name) === key) ?? null;
}

/**
 * Writes the key of every user that has none (the users that existed before keys did), oldest
 * first, one statement each: the first user of a name takes it; a later user of the same name
 * keeps its name and no key, and is returned so the server can say so (an admin renames it).
 * Idempotent, and safe when replicas run it together (a key one of them wrote first is a miss).
 */
export async function backfillNameKeys(db: Db): Promise<Array<{ id: string; name: string }>> {
  const missing = await db
    .select({ id: users.id, name: users.name })
    .from(users)
    .where(and(isNull(users.nameKey), isNull(users.deletedAt)))
    .orderBy(asc(users.createdAt), asc(users.id));
  const shared: Array<{ id: string; name: string }> = [];
  for (const user of missing) {
    const key = displayNameKey(user.name);
    try {
      if (key !== "") {
        await db
          .update(users)
          .set({ nameKey: key })
          .where(and(eq(users.id, user.id), isNull(users.nameKey)));
        continue;
      }
    } catch (error) {
      if (!isNameKeyViolation(error)) throw error;
    }
    shared.push(user);
  }
  return shared;
}
