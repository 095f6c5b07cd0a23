import { eq } from "drizzle-orm";
import type { Db } from "../client";
import { agentSessions } from "../schema";

export type TSessionRow = typeof agentSessions.$inferSelect;

/** The user a session belongs to, or null when there is no such session. */
export async function sessionOwnerId(db: Db, sessionId: string): Promise<string | null> {
  const [row] = await db.select({ userId: agentSessions.userId }).from(agentSessions).where(eq(agentSessions.id, sessionId));
  return row?.userId ?? null;
}

/** A session by id, or null. */
export async function sessionById(db: Db, sessionId: string): Promise<TSessionRow | null> {
  const [row] = await db.select().from(agentSessions).where(eq(agentSessions.id, sessionId));
  return row ?? null;
}

/** Is there a session with this id? */
export async function sessionExists(db: Db, sessionId: string): Promise<boolean> {
  const [row] = await db.select({ id: agentSessions.id }).from(agentSessions).where(eq(agentSessions.id, sessionId));
  return row !== undefined;
}

/** Stores a session; one stored already under the same id (a concurrent first run) is kept as it is. */
export async function createSessionIfAbsent(db: Db, session: Pick<TSessionRow, "id" | "userId" | "agent" | "workspaceDir">): Promise<void> {
  await db.insert(agentSessions).values(session).onConflictDoNothing({ target: agentSessions.id });
}
