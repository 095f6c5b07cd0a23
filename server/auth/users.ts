import { and, eq, isNull, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { users } from "../../db/schema";
import type { TActor } from "../core/actor";
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
 * (email defaults to `<name>@countersign.local`).
 */
export async function addUser(
  db: Db,
  auth: TAuth,
  input: { name: string; role: TRole; email?: string; password?: string },
): Promise<{ userId: string; apiKey: string; email: string }> {
  const email = (input.email ?? `${slug(input.name)}@countersign.local`).toLowerCase();
  const [taken] = await db.select({ id: users.id }).from(users).where(eq(users.email, email));
  if (taken) throw new DomainError("conflict", `A user with the email ${email} already exists.`);
  let userId: string;
  if (input.password) {
    // Public sign-up is disabled; users are created here through better-auth's internal adapter.
    const ctx = await auth.$context;
    const user = await ctx.internalAdapter.createUser({ email, name: input.name, emailVerified: true }, { method: "admin" });
    const hash = await ctx.password.hash(input.password);
    await ctx.internalAdapter.linkAccount({ userId: user.id, providerId: "credential", accountId: user.id, password: hash });
    userId = user.id;
  } else {
    userId = newId("user");
    await db.insert(users).values({ id: userId, name: input.name, email });
  }
  await db.update(users).set({ role: input.role }).where(eq(users.id, userId));
  const { apiKey } = await createApiKey(db, userId);
  return { userId, apiKey, email };
}

/** Finds a user by id, email or exact name (a deleted user keeps its name but is found by id only). */
export async function findUser(db: Db, ref: string): Promise<{ id: string; name: string; email: string } | null> {
  const rows = await db
    .select({ id: users.id, name: users.name, email: users.email })
    .from(users)
    .where(or(eq(users.id, ref), and(isNull(users.deletedAt), or(eq(users.email, ref.toLowerCase()), eq(users.name, ref)))));
  return rows.length === 1 ? (rows[0] ?? null) : null;
}
