import { eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { prepared } from "../prepared";
import { agentSessions, responses, steeringMessages } from "../schema";

/** The stored workspace directory of a session; null when the session is not stored. */
export async function sessionWorkspaceDir(db: Db, sessionId: string): Promise<string | null> {
  const [session] = await db.select({ workspaceDir: agentSessions.workspaceDir }).from(agentSessions).where(eq(agentSessions.id, sessionId));
  return session?.workspaceDir ?? null;
}

/**
 * What a resumed run reads beside its claim, in one statement: its session's workspace directory
 * and how many steering messages wait for it (at most one row).
 */
export const resumeContext = prepared<{ id: string }, Array<{ workspaceDir: string; queuedSteering: number }>>("resume_context", (db) =>
  db
    .select({
      workspaceDir: agentSessions.workspaceDir,
      queuedSteering: sql<number>`(select count(*)::int from ${steeringMessages} where ${steeringMessages.responseId} = ${responses.id} and ${steeringMessages.status} = 'queued')`,
    })
    .from(agentSessions)
    .innerJoin(responses, eq(responses.sessionId, agentSessions.id))
    .where(eq(responses.id, sql.placeholder("id"))),
);
