import type { Db } from "../../db/client";
import { recordAdminEvent } from "../../db/repositories/audit";
import { isNameKeyViolation, nameHolder } from "../../db/repositories/display-names";
import { activeUserById, insertPasswordAccount, insertUser, userIdByEmail, usersMatchingRef } from "../../db/repositories/users";
import type { TActor } from "../core/actor";
import { SYSTEM_ORIGIN, type TAdminWho } from "../core/admin-trail";
import { displayNameKey, ZDisplayName } from "../core/display-name";
import { DomainError, refused } from "../core/errors";
import { newId } from "../core/ids";
import type { TRole } from "../core/vocabulary";
import { createApiKey } from "./api-keys";
import type { TAuth } from "./auth";

/** The actor for a user id, or null when the user does not exist or is disabled or deleted. */
export async function actorOf(db: Db, userId: string): Promise<TActor | null> {
  const user = await activeUserById(db, userId);
  return user ? { userId: user.id, role: user.role, name: user.name, email: user.email } : null;
}

const slug = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, ".").replace(/^\.|\.$/g, "") || "user";

/** A display name as given, checked ({@link ZDisplayName}); a bad one is a 400 naming what is wrong. */
export function checkedDisplayName(name: string): string {
  const parsed = ZDisplayName.safeParse(name);
  if (!parsed.success) throw new DomainError("invalid_request", parsed.error.issues[0]?.message ?? "The display name is not valid.");
  return parsed.data;
}

/** The 409 of a display name another user has (the same by {@link displayNameKey}). */
export const nameTaken = (name: string) => refused("conflict", { code: "nameTaken", params: { name } });

/**
 * Runs a write that gives a user a display name: refused (409, nothing written) when another user
 * who is not deleted has the same name by the rule, whether found first or hit at the unique index
 * by a concurrent writer that took it a moment earlier.
 */
export async function claimingName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isNameKeyViolation(error)) throw nameTaken(name);
    throw error;
  }
}

/**
 * Adds a user with an API key; with a password the user can also log in to the console
 * (email defaults to `<name>@countersign.local`). The display name must be free (no other user
 * who is not deleted has the same one by {@link displayNameKey}). The user, its credential, its
 * key and the trail row (`user.created`, never the password or the key) commit in one
 * transaction. Without `who` the server itself acts (the demo user at first start, tests).
 */
export async function addUser(
  db: Db,
  auth: TAuth,
  input: { name: string; role: TRole; email?: string; password?: string },
  who: TAdminWho = { actor: null, origin: SYSTEM_ORIGIN },
): Promise<{ userId: string; apiKey: string; email: string }> {
  const name = checkedDisplayName(input.name);
  const email = (input.email ?? `${slug(name)}@countersign.local`).toLowerCase();
  // better-auth's scrypt hash, the one its sign-in checks; computed before the transaction opens.
  const hash = input.password ? await (await auth.$context).password.hash(input.password) : null;
  return claimingName(name, () =>
    db.transaction(async (transaction) => {
      const tx = transaction as unknown as Db;
      if (await nameHolder(tx, name)) throw nameTaken(name);
      if ((await userIdByEmail(tx, email)) !== null) throw new DomainError("conflict", `A user with the email ${email} already exists.`);
      const userId = newId("user");
      await insertUser(tx, { id: userId, name, email, emailVerified: hash !== null, role: input.role });
      if (hash) await insertPasswordAccount(tx, { id: newId("acct"), userId, passwordHash: hash });
      const { id: keyId, apiKey } = await createApiKey(tx, userId);
      await recordAdminEvent(tx, who, { action: "user.created", targetType: "user", targetId: userId, detail: { name, email, role: input.role, signIn: hash !== null, apiKeyId: keyId } });
      return { userId, apiKey, email };
    }),
  );
}

/**
 * Finds a user by id, email or name (exact, or the same by {@link displayNameKey}: `alice` finds
 * Alice). A deleted user keeps its name but is found by id only.
 */
export async function findUser(db: Db, ref: string): Promise<{ id: string; name: string; email: string } | null> {
  const rows = await usersMatchingRef(db, ref);
  return rows.length === 1 ? (rows[0] ?? null) : null;
}
