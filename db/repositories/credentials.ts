import { eq } from "drizzle-orm";
import type { TRole } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { apiKeys, loginSessions, users } from "../schema";

/** What a credential's holder is now: the user's role and standing. */
type TUserStanding = { userId: string; role: TRole; disabledAt: Date | null; deletedAt: Date | null };

const standing = { role: users.role, disabledAt: users.disabledAt, deletedAt: users.deletedAt };

/** An API key as it stands now (revoked or not) with its user's standing; null when the key does not exist. */
export async function apiKeyStanding(db: Db, keyId: string): Promise<(TUserStanding & { revokedAt: Date | null }) | null> {
  const [row] = await db
    .select({ ...standing, userId: apiKeys.userId, revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(eq(apiKeys.id, keyId));
  return row ?? null;
}

/** A console login session as it stands now (its expiry) with its user's standing; null when it is gone. */
export async function loginSessionStanding(db: Db, sessionId: string): Promise<(TUserStanding & { expiresAt: Date }) | null> {
  const [row] = await db
    .select({ ...standing, userId: loginSessions.userId, expiresAt: loginSessions.expiresAt })
    .from(loginSessions)
    .innerJoin(users, eq(users.id, loginSessions.userId))
    .where(eq(loginSessions.id, sessionId));
  return row ?? null;
}
