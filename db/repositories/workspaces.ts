import { eq } from "drizzle-orm";
import type { Db } from "../client";
import { agentSessions } from "../schema";

/** The stored workspace directory of a session; null when the session is not stored. */
export async function sessionWorkspaceDir(db: Db, sessionId: string): Promise<string | null> {
  const [session] = await db.select({ workspaceDir: agentSessions.workspaceDir }).from(agentSessions).where(eq(agentSessions.id, sessionId));
  return session?.workspaceDir ?? null;
}
