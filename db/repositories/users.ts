import { and, arrayOverlaps, count, eq, inArray, isNull, or, sql } from "drizzle-orm";
import { displayNameKey } from "../../server/core/display-name";
import type { TRole } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { accounts, users } from "../schema";

/** A user who is neither disabled nor deleted, with what an actor carries; null otherwise. */
export async function activeUserById(db: Db, userId: string): Promise<{ id: string; role: TRole; name: string; email: string; groups: string[] } | null> {
  const [user] = await db
    .select({ id: users.id, role: users.role, name: users.name, email: users.email, groups: users.groups })
    .from(users)
    .where(and(eq(users.id, userId), isNull(users.disabledAt), isNull(users.deletedAt)));
  return user ?? null;
}

/** The id of the user with this (lower-cased) email, deleted or not, or null. */
export async function userIdByEmail(db: Db, email: string): Promise<string | null> {
  const [taken] = await db.select({ id: users.id }).from(users).where(eq(users.email, email));
  return taken?.id ?? null;
}

/** Inserts a new user row (its display name key computed from the name). */
export async function insertUser(
  tx: Db,
  user: { id: string; name: string; email: string; emailVerified: boolean; role: TRole; groups?: string[]; breakGlass?: boolean },
): Promise<void> {
  await tx.insert(users).values({
    id: user.id,
    name: user.name,
    nameKey: displayNameKey(user.name),
    email: user.email,
    emailVerified: user.emailVerified,
    role: user.role,
    groups: user.groups ?? [],
    breakGlass: user.breakGlass ?? false,
  });
}

/** Links a user to its account at a single sign-on provider (`subject`: the provider's `sub`). */
export async function insertSsoAccount(tx: Db, account: { id: string; userId: string; providerId: string; subject: string }): Promise<void> {
  await tx.insert(accounts).values({ id: account.id, userId: account.userId, providerId: account.providerId, accountId: account.subject });
}

/** The user a single sign-on account (`providerId`, the provider's subject) belongs to, or null. */
export async function userIdBySsoAccount(db: Db, providerId: string, subject: string): Promise<string | null> {
  const [row] = await db.select({ userId: accounts.userId }).from(accounts).where(and(eq(accounts.providerId, providerId), eq(accounts.accountId, subject)));
  return row?.userId ?? null;
}

/** A user's role, teams and name, locked for an update in the same transaction; null when there is none. */
export async function lockUserRoleAndGroups(tx: Db, userId: string): Promise<{ id: string; name: string; role: TRole; groups: string[] } | null> {
  const [row] = await tx.select({ id: users.id, name: users.name, role: users.role, groups: users.groups }).from(users).where(eq(users.id, userId)).for("update");
  return row ?? null;
}

/** Sets a user's role and teams (a single sign-on applies the provider's groups). */
export async function setUserRoleAndGroups(tx: Db, userId: string, role: TRole, groups: string[]): Promise<void> {
  await tx.update(users).set({ role, groups, updatedAt: new Date() }).where(eq(users.id, userId));
}

/** The email addresses of the active users in each of these teams (`users.groups`). */
export async function teamMemberEmails(db: Db, teams: string[]): Promise<Map<string, string[]>> {
  const rows = await db
    .select({ email: users.email, groups: users.groups })
    .from(users)
    .where(and(arrayOverlaps(users.groups, teams), isNull(users.disabledAt), isNull(users.deletedAt)));
  const out = new Map<string, string[]>(teams.map((t) => [t, []]));
  for (const row of rows) for (const team of row.groups) out.get(team)?.push(row.email);
  return out;
}

/** Whether the user (by lower-cased email) may sign in with a password while password sign-in is off. */
export async function isBreakGlassEmail(db: Db, email: string): Promise<boolean> {
  const [row] = await db.select({ breakGlass: users.breakGlass }).from(users).where(and(eq(users.email, email), isNull(users.deletedAt)));
  return row?.breakGlass === true;
}

/** Gives a user a password sign-in (better-auth's `credential` account, its scrypt hash). */
export async function insertPasswordAccount(tx: Db, account: { id: string; userId: string; passwordHash: string }): Promise<void> {
  await tx.insert(accounts).values({ id: account.id, userId: account.userId, providerId: "credential", accountId: account.userId, password: account.passwordHash });
}

/**
 * The users a reference may name: by id (deleted too), or, not deleted, by email (lower-cased),
 * exact name or the same name by {@link displayNameKey}.
 */
export async function usersMatchingRef(db: Db, ref: string): Promise<Array<{ id: string; name: string; email: string }>> {
  return db
    .select({ id: users.id, name: users.name, email: users.email })
    .from(users)
    .where(or(eq(users.id, ref), and(isNull(users.deletedAt), or(eq(users.email, ref.toLowerCase()), eq(users.name, ref), eq(users.nameKey, displayNameKey(ref))))));
}

/** When a user was disabled and deleted (null when not), or null for an unknown user: may it sign in? */
export async function userDisabledDeletedAt(db: Db, userId: string): Promise<{ disabledAt: Date | null; deletedAt: Date | null } | null> {
  const [user] = await db.select({ disabledAt: users.disabledAt, deletedAt: users.deletedAt }).from(users).where(eq(users.id, userId));
  return user ?? null;
}

/** How many users exist (deleted ones too). */
export async function countUsers(db: Db): Promise<number> {
  const [row] = await db.select({ n: count() }).from(users);
  return row?.n ?? 0;
}

/** The users whose email is one of `emails` (exact match), with their ids. */
export async function usersByEmails(db: Db, emails: string[]): Promise<Array<{ id: string; email: string }>> {
  return db.select({ id: users.id, email: users.email }).from(users).where(inArray(users.email, emails));
}

/** The Countersign user with this email, compared case-insensitively (Slack's users map to ours by it); null when none. */
export async function userIdByEmailIgnoringCase(db: Db, email: string): Promise<string | null> {
  const [user] = await db.select({ id: users.id }).from(users).where(sql`lower(${users.email}) = ${email}`);
  return user?.id ?? null;
}

/** Whom a single-use link acts for: the user's name and email; null when the user is gone. */
export async function linkRecipient(db: Db, userId: string): Promise<{ name: string; email: string } | null> {
  const [user] = await db.select({ name: users.name, email: users.email }).from(users).where(eq(users.id, userId));
  return user ?? null;
}
