import { endSessionOf, liveSessionsOf } from "../../../db/repositories/login-sessions";
import type { TActor } from "../../core/actor";
import type { TCredential } from "../../core/credential";
import { notFound } from "../../core/errors";
import type { TDeps } from "../../host/deps";

/** One of my console sessions: where and when, and whether it is the one asking. */
export type TMySession = { id: string; createdAt: string; lastSeenAt: string; expiresAt: string; ipAddress: string | null; userAgent: string | null; current: boolean };

/** The signed-in person's own console sessions (every role; nobody sees another's here). */
export async function mySessions(deps: Pick<TDeps, "db" | "now">, actor: TActor, credential: TCredential | null): Promise<TMySession[]> {
  const rows = await liveSessionsOf(deps.db, actor.userId, deps.now());
  const currentId = credential?.via === "cookie" ? credential.sessionId : null;
  return rows.map((r) => ({
    id: r.id,
    createdAt: r.createdAt.toISOString(),
    lastSeenAt: r.lastSeenAt.toISOString(),
    expiresAt: r.expiresAt.toISOString(),
    ipAddress: r.ipAddress,
    userAgent: r.userAgent,
    current: r.id === currentId,
  }));
}

/**
 * Ends one of the person's own console sessions (signs that browser out): its cookie answers 401
 * and its open connections close at once (announced to every replica). Another person's session
 * id is not found, as an unknown one.
 */
export async function endMySession(deps: Pick<TDeps, "db" | "bus" | "log">, actor: TActor, sessionId: string): Promise<{ ended: true }> {
  if (!(await endSessionOf(deps.db, actor.userId, sessionId))) throw notFound("session", sessionId);
  deps.bus.publishCredentials({ userId: actor.userId });
  deps.log.info({ userId: actor.userId }, "a console session was ended by its owner");
  return { ended: true };
}
