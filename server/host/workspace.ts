import { join } from "node:path";
import { eq } from "drizzle-orm";
import { agentSessions } from "../../db/schema";
import type { TDeps } from "./deps";

/** The working directory of a session's runs: its own, or one under the data directory. */
export async function sessionWorkspace(deps: Pick<TDeps, "db" | "config">, sessionId: string): Promise<string> {
  const [session] = await deps.db.select({ workspaceDir: agentSessions.workspaceDir }).from(agentSessions).where(eq(agentSessions.id, sessionId));
  return session?.workspaceDir ?? join(deps.config.dataDir, "workspaces", sessionId);
}
