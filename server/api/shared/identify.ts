import type { IncomingMessage } from "node:http";
import type { ApiKeyCache } from "../../auth/api-key-cache";
import { consoleSession, type TAuth } from "../../auth/auth";
import type { TCredential } from "../../auth/credential-status";
import { actorOf } from "../../auth/users";
import type { TActor } from "../../core/actor";
import { DomainError } from "../../core/errors";
import type { TDeps } from "../../host/deps";
import { noteRequestUser } from "./request-user";
import { isSafeMethod, isSameOriginRequest } from "./same-origin";

/** The caller, and the credential it came with (long-lived connections re-check it). */
export type TIdentity = { actor: TActor; via: "api_key" | "cookie"; credential: TCredential };

/**
 * Resolves the caller: `Authorization: Bearer <key>`, then `?access_token=<key>` (browsers
 * that cannot set headers), then the console session cookie (403 for a cross-site mutation).
 * Disabled and deleted users are nobody.
 */
export async function identify(deps: Pick<TDeps, "db"> & { keys: ApiKeyCache; publicUrl?: string }, auth: TAuth, req: IncomingMessage, url: URL): Promise<TIdentity | null> {
  const header = req.headers.authorization;
  const bearer = header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  const key = bearer ?? url.searchParams.get("access_token");
  if (header && !bearer) return null;
  if (key) {
    const found = await deps.keys.actorFor(key);
    if (!found) return null;
    const { keyId, ...actor } = found;
    noteRequestUser(req, actor.userId);
    return { actor, via: "api_key", credential: { via: "api_key", keyId, userId: actor.userId, role: actor.role } };
  }
  const session = await consoleSession(auth, req.headers);
  const actor = session ? await actorOf(deps.db, session.userId) : null;
  // CSRF: a browser attaches the cookie to cross-site requests too, so a cookie-authenticated
  // mutation must come from our own origin. API keys are never sent implicitly and are not affected.
  if (actor && !isSafeMethod(req.method) && !isSameOriginRequest(req, deps.publicUrl)) {
    throw new DomainError("forbidden", "Cross-site request refused: a request authenticated by the console session cookie must come from this origin (Origin or Sec-Fetch-Site: same-origin).");
  }
  if (actor && session) noteRequestUser(req, actor.userId);
  return actor && session ? { actor, via: "cookie", credential: { via: "cookie", sessionId: session.sessionId, userId: actor.userId, role: actor.role } } : null;
}
