import { createHash } from "node:crypto";
import { join } from "node:path";
import { createSessionIfAbsent, sessionExists, sessionOwnerId } from "../../db/repositories/sessions";
import type { TActor } from "../core/actor";
import type { TDeps } from "../host/deps";
import { prepareWorkspace } from "../host/workspace";

/** The session an AG-UI thread of this user maps to when the thread id is not one of its sessions. */
export const threadSessionId = (userId: string, threadId: string): string =>
  `sess_${createHash("sha256").update(`agui\u0000${userId}\u0000${threadId}`).digest("hex").slice(0, 32)}`;

/**
 * The Countersign session of an AG-UI thread: the user's own session when the thread id names
 * one, else a session derived from (user, thread id), created on first use. Another user's
 * session id maps to a fresh session of the caller: nothing of the other user is reachable.
 */
export async function sessionForThread(deps: TDeps, actor: TActor, threadId: string, agent: string): Promise<string> {
  if ((await sessionOwnerId(deps.db, threadId)) === actor.userId) return threadId;
  const id = threadSessionId(actor.userId, threadId);
  if (await sessionExists(deps.db, id)) return id;
  const workspaceDir = join(deps.config.dataDir, "workspaces", id);
  prepareWorkspace(workspaceDir, deps.sandbox);
  // Two first runs of a thread may race: the second insert changes nothing.
  await createSessionIfAbsent(deps.db, { id, userId: actor.userId, agent, workspaceDir });
  return id;
}
