import { sessionById, sessionOwnerId } from "../../../db/repositories/sessions";
import type { TActor } from "../../core/actor";
import type { TReadScope } from "../../core/read-scope";
import { notFound } from "../../core/errors";
import { isSessionIdMintedFor } from "../../core/session-ids";
import type { TDeps } from "../../host/deps";

/** The user a session belongs to, or null when there is no such session. */
export async function sessionOwner(deps: Pick<TDeps, "db">, sessionId: string): Promise<string | null> {
  return sessionOwnerId(deps.db, sessionId);
}

/**
 * Checks that `sessionId` is the actor's own session to run in: its stored session, or an id
 * minted for it whose first run has not happened yet. Anything else is a 404.
 */
export async function assertOwnSession(deps: Pick<TDeps, "db" | "secretKey">, actor: TActor, sessionId: string): Promise<void> {
  const owner = await sessionOwner(deps, sessionId);
  const minted = owner === null && isSessionIdMintedFor(deps.secretKey, actor.userId, sessionId);
  if (!minted && owner !== actor.userId) throw notFound("session", sessionId);
}

/** One session as `scope` may read it (404 otherwise). */
export async function readSession(deps: Pick<TDeps, "db">, scope: TReadScope, sessionId: string) {
  const session = await sessionById(deps.db, sessionId);
  if (!session || !scope.canRead(session.userId)) throw notFound("session", sessionId);
  return { id: session.id, userId: session.userId, agent: session.agent, access: session.access, createdAt: session.createdAt.toISOString() };
}
