import type { Db } from "../../db/client";
import { recordAdminEvent } from "../../db/repositories/audit";
import { isEmailViolation, isNameKeyViolation, nameHolder } from "../../db/repositories/display-names";
import { insertPasswordAccount, insertSsoAccount, insertUser, userIdByEmail } from "../../db/repositories/users";
import type { TAdminWho } from "../core/admin-trail";
import { displayNameKey, ZDisplayName } from "../core/display-name";
import { DomainError, refused } from "../core/errors";
import { newId } from "../core/ids";
import type { TRole } from "../core/vocabulary";
import { createApiKey } from "./api-keys";

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

export type TNewUser = {
  name: string;
  role: TRole;
  email: string;
  passwordHash: string | null;
  emailVerified: boolean;
  breakGlass: boolean;
  groups: string[];
  /** The account at a single sign-on provider the user is added for. */
  sso?: { providerId: string; subject: string };
};

/** The 409 of an email another user has. */
const emailTaken = (email: string) => new DomainError("conflict", `A user with the email ${email} already exists.`);

/**
 * The one write of a new user: refused (409, nothing written) when its display name or email is
 * taken, found first or hit at the unique index by a concurrent writer; the user, its password
 * credential, its API key (`withKey`) and the trail row (`user.created`, never the password or
 * the key) commit in one transaction.
 */
export async function insertNewUser(db: Db, user: TNewUser, who: TAdminWho, withKey: boolean): Promise<{ userId: string; apiKey: string | null }> {
  try {
    return await insertNewUserOnce(db, user, who, withKey);
  } catch (error) {
    if (isEmailViolation(error)) throw emailTaken(user.email);
    throw error;
  }
}

function insertNewUserOnce(db: Db, user: TNewUser, who: TAdminWho, withKey: boolean): Promise<{ userId: string; apiKey: string | null }> {
  return claimingName(user.name, () =>
    db.transaction(async (transaction) => {
      const tx = transaction as unknown as Db;
      if (await nameHolder(tx, user.name)) throw nameTaken(user.name);
      if ((await userIdByEmail(tx, user.email)) !== null) throw emailTaken(user.email);
      const userId = newId("user");
      await insertUser(tx, { id: userId, name: user.name, email: user.email, emailVerified: user.emailVerified, role: user.role, groups: user.groups, breakGlass: user.breakGlass });
      if (user.passwordHash) await insertPasswordAccount(tx, { id: newId("acct"), userId, passwordHash: user.passwordHash });
      if (user.sso) await insertSsoAccount(tx, { id: newId("acct"), userId, providerId: user.sso.providerId, subject: user.sso.subject });
      const key = withKey ? await createApiKey(tx, userId) : null;
      const detail = {
        name: user.name,
        email: user.email,
        role: user.role,
        signIn: user.passwordHash !== null,
        apiKeyId: key?.id ?? null,
        ...(user.groups.length > 0 ? { groups: user.groups } : {}),
        ...(user.breakGlass ? { breakGlass: true } : {}),
      };
      await recordAdminEvent(tx, who, { action: "user.created", targetType: "user", targetId: userId, detail });
      return { userId, apiKey: key?.apiKey ?? null };
    }),
  );
}

/**
 * Adds the person a single sign-on names for the first time (just in time), linked to its account
 * at the provider: no password, no API key, the role and teams from the provider's groups. The
 * provider's name is kept when it is free; else the name with the email beside it, else the email.
 */
export async function addSsoUser(
  db: Db,
  person: { name: string | undefined; email: string; role: TRole; groups: string[]; providerId: string; subject: string },
  who: TAdminWho,
): Promise<string> {
  const email = person.email.toLowerCase();
  const given = person.name?.trim() ? person.name.trim() : email;
  const candidates = [...new Set([given, `${given} (${email})`, email])].filter((n) => ZDisplayName.safeParse(n).success);
  for (const [i, name] of candidates.entries()) {
    if (i < candidates.length - 1 && (await nameHolder(db, name))) continue;
    const user = { name, role: person.role, email, passwordHash: null, emailVerified: true, breakGlass: false, groups: person.groups, sso: { providerId: person.providerId, subject: person.subject } };
    return (await insertNewUser(db, user, who, false)).userId;
  }
  throw new DomainError("invalid_request", `The identity provider gave no usable display name for ${email}.`);
}
