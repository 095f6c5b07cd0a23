import { eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { prepared } from "../prepared";
import { agentSessions, responses } from "../schema";

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
