import { and, eq, isNull, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { recordAdminEvent } from "../../db/repositories/audit";
import { accounts, users } from "../../db/schema";
import type { TActor } from "../core/actor";
import { SYSTEM_ORIGIN, type TAdminWho } from "../core/admin-trail";
import { DomainError } from "../core/errors";
import { newId } from "../core/ids";
import type { TRole } from "../core/vocabulary";
import { createApiKey } from "./api-keys";
import type { TAuth } from "./auth";

/** The actor for a user id, or null when the user does not exist or is disabled or deleted. */
export async function actorOf(db: Db, userId: string): Promise<TActor | null> {
  const [user] = await db
    .select({ id: users.id, role: users.role, name: users.name, email: users.email })
    .from(users)
    .where(and(eq(users.id, userId), isNull(users.disabledAt), isNull(users.deletedAt)));
  return user ? { userId: user.id, role: user.role, name: user.name, email: user.email } : null;
}

const slug = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, ".").replace(/^\.|\.$/g, "") || "user";

/**
 * Adds a user with an API key; with a password the user can also log in to the console
 * (email defaults to `<name>@countersign.local`). The user, its credential, its key and the
 * trail row (`user.created`, never the password or the key) commit in one transaction.
 * Without `who` the server itself acts (the demo user at first start, tests).
 */
export async function addUser(
  db: Db,
  auth: TAuth,
  input: { name: string; role: TRole; email?: string; password?: string },
  who: TAdminWho = { actor: null, origin: SYSTEM_ORIGIN },
): Promise<{ userId: string; apiKey: string; email: string }> {
  const email = (input.email ?? `${slug(input.name)}@countersign.local`).toLowerCase();
  // better-auth's scrypt hash, the one its sign-in checks; computed before the transaction opens.
  const hash = input.password ? await (await auth.$context).password.hash(input.password) : null;
  return db.transaction(async (transaction) => {
    const tx = transaction as unknown as Db;
    const [taken] = await tx.select({ id: users.id }).from(users).where(eq(users.email, email));
    if (taken) throw new DomainError("conflict", `A user with the email ${email} already exists.`);
    const userId = newId("user");
    await tx.insert(users).values({ id: userId, name: input.name, email, emailVerified: hash !== null, role: input.role });
    if (hash) await tx.insert(accounts).values({ id: newId("acct"), userId, providerId: "credential", accountId: userId, password: hash });
    const { id: keyId, apiKey } = await createApiKey(tx, userId);
    await recordAdminEvent(tx, who, { action: "user.created", targetType: "user", targetId: userId, detail: { name: input.name, role: input.role, signIn: hash !== null, apiKeyId: keyId } });
    return { userId, apiKey, email };
  });
}

/** Finds a user by id, email or exact name (a deleted user keeps its name but is found by id only). */
export async function findUser(db: Db, ref: string): Promise<{ id: string; name: string; email: string } | null> {
  const rows = await db
    .select({ id: users.id, name: users.name, email: users.email })
    .from(users)
    .where(or(eq(users.id, ref), and(isNull(users.deletedAt), or(eq(users.email, ref.toLowerCase()), eq(users.name, ref)))));
  return rows.length === 1 ? (rows[0] ?? null) : null;
}
