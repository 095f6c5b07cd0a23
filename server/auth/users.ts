import type { Db } from "../../db/client";
import { activeUserById, isBreakGlassEmail, usersMatchingRef } from "../../db/repositories/users";
import type { TActor } from "../core/actor";
import { SYSTEM_ORIGIN, type TAdminWho } from "../core/admin-trail";
import { DomainError } from "../core/errors";
import type { TRole } from "../core/vocabulary";
import type { TAuth } from "./auth";
import { checkedDisplayName, insertNewUser } from "./new-user";

/** The actor for a user id, or null when the user does not exist or is disabled or deleted. */
export async function actorOf(db: Db, userId: string): Promise<TActor | null> {
  const user = await activeUserById(db, userId);
  return user ? { userId: user.id, role: user.role, name: user.name, email: user.email, groups: user.groups } : null;
}

const slug = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, ".").replace(/^\.|\.$/g, "") || "user";

/**
 * Adds a user with an API key; with a password the user can also log in to the console (email
 * defaults to `<name>@countersign.local`). The display name must be free (no other user who is not
 * deleted has the same one by {@link displayNameKey}). Without `who` the server itself acts (the
 * demo user at first start, tests). `breakGlass`: may sign in with a password while password
 * sign-in is off (docs/sso.md).
 */
export async function addUser(
  db: Db,
  auth: TAuth,
  input: { name: string; role: TRole; email?: string; password?: string; breakGlass?: boolean },
  who: TAdminWho = { actor: null, origin: SYSTEM_ORIGIN },
): Promise<{ userId: string; apiKey: string; email: string }> {
  const name = checkedDisplayName(input.name);
  const email = (input.email ?? `${slug(name)}@countersign.local`).toLowerCase();
  if (input.breakGlass && !input.password) throw new DomainError("invalid_request", "A break-glass user signs in with a password: give one (--password).");
  // better-auth's scrypt hash, the one its sign-in checks; computed before the transaction opens.
  const passwordHash = input.password ? await (await auth.$context).password.hash(input.password) : null;
  const user = { name, role: input.role, email, passwordHash, emailVerified: passwordHash !== null, breakGlass: input.breakGlass ?? false, groups: [] };
  const { userId, apiKey } = await insertNewUser(db, user, who, true);
  return { userId, apiKey: apiKey as string, email };
}

/**
 * Finds a user by id, email or name (exact, or the same by {@link displayNameKey}: `alice` finds
 * Alice). A deleted user keeps its name but is found by id only.
 */
export async function findUser(db: Db, ref: string): Promise<{ id: string; name: string; email: string } | null> {
  const rows = await usersMatchingRef(db, ref);
  return rows.length === 1 ? (rows[0] ?? null) : null;
}

/**
 * May this email sign in with a password? Always, unless password sign-in is off
 * (COUNTERSIGN_PASSWORD_LOGIN=off with single sign-on): then only a break-glass user may.
 */
export async function passwordSignInAllowed(db: Db, passwordLogin: boolean, email: string | null): Promise<boolean> {
  if (passwordLogin) return true;
  return email !== null && (await isBreakGlassEmail(db, email.trim().toLowerCase()));
}
