import { and, desc, eq, gt } from "drizzle-orm";
import type { Db } from "../client";
import { loginSessions } from "../schema";

/** One console login session as its owner sees it: when it began and was last refreshed, from where. */
export type TLoginSessionRow = { id: string; createdAt: Date; lastSeenAt: Date; expiresAt: Date; ipAddress: string | null; userAgent: string | null };

/** The user's console login sessions that have not expired, the most recently refreshed first. */
export async function liveSessionsOf(db: Db, userId: string, now: Date): Promise<TLoginSessionRow[]> {
  return db
    .select({ id: loginSessions.id, createdAt: loginSessions.createdAt, lastSeenAt: loginSessions.updatedAt, expiresAt: loginSessions.expiresAt, ipAddress: loginSessions.ipAddress, userAgent: loginSessions.userAgent })
    .from(loginSessions)
    .where(and(eq(loginSessions.userId, userId), gt(loginSessions.expiresAt, now)))
    .orderBy(desc(loginSessions.updatedAt))
    .limit(200);
}

/** Ends one of the user's sessions; false when the user has no session with that id. */
export async function endSessionOf(db: Db, userId: string, sessionId: string): Promise<boolean> {
  const rows = await db.delete(loginSessions).where(and(eq(loginSessions.id, sessionId), eq(loginSessions.userId, userId))).returning({ id: loginSessions.id });
  return rows.length > 0;
}
