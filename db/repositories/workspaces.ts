import { eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { prepared } from "../prepared";
import { agentSessions, responses } from "../schema";

/** The sessions runs work in, each with its own workspace directory. */
export type TAgentSessionRow = typeof agentSessions.$inferSelect;

/** The stored workspace directory of a session; null when the session is not stored. */
export async function sessionWorkspaceDir(db: Db, sessionId: string): Promise<string | null> {
  const [session] = await db.select({ workspaceDir: agentSessions.workspaceDir }).from(agentSessions).where(eq(agentSessions.id, sessionId));
  return session?.workspaceDir ?? null;
}

/** The workspace directory of a response's session (at most one row). */
export const responseWorkspaceDir = prepared<{ id: string }, Array<{ workspaceDir: string }>>("workspace_of", (db) =>
  db
    .select({ workspaceDir: agentSessions.workspaceDir })
    .from(agentSessions)
    .innerJoin(responses, eq(responses.sessionId, agentSessions.id))
    .where(eq(responses.id, sql.placeholder("id"))),
);

/** Who a session belongs to; null when the session is not stored. */
export async function sessionOwnerOf(db: Db, sessionId: string): Promise<string | null> {
  const [session] = await db.select({ userId: agentSessions.userId }).from(agentSessions).where(eq(agentSessions.id, sessionId));
  return session?.userId ?? null;
}

/** One session by id; null when it is not stored. */
export async function sessionById(db: Db, sessionId: string): Promise<TAgentSessionRow | null> {
  const [session] = await db.select().from(agentSessions).where(eq(agentSessions.id, sessionId));
  return session ?? null;
}

/** Stores a session; one stored already under the same id (a concurrent first run) is kept as it is. */
export async function insertSessionIfAbsent(tx: Db, values: Pick<TAgentSessionRow, "id" | "userId" | "agent" | "workspaceDir">): Promise<void> {
  await tx.insert(agentSessions).values(values).onConflictDoNothing({ target: agentSessions.id });
}
