import type { IncomingMessage } from "node:http";
import { actorForApiKey } from "../../auth/api-keys";
import { sessionUserId, type TAuth } from "../../auth/auth";
import { actorOf } from "../../auth/users";
import type { TActor } from "../../core/actor";
import { DomainError } from "../../core/errors";
import type { Db } from "../../../db/client";
import { isSafeMethod, isSameOriginRequest } from "./guard";

export type TIdentity = { actor: TActor; via: "api_key" | "cookie" };

/**
 * Resolves the caller: `Authorization: Bearer <key>`, then `?access_token=<key>` (browsers
 * that cannot set headers), then the console session cookie (403 for a cross-site mutation).
 */
export async function identify(db: Db, auth: TAuth, req: IncomingMessage, url: URL): Promise<TIdentity | null> {
  const header = req.headers.authorization;
  const bearer = header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  const key = bearer ?? url.searchParams.get("access_token");
  if (header && !bearer) return null;
  if (key) {
    const actor = await actorForApiKey(db, key);
    return actor ? { actor, via: "api_key" } : null;
  }
  const userId = await sessionUserId(auth, req.headers);
  const actor = userId ? await actorOf(db, userId) : null;
  // CSRF: a browser attaches the cookie to cross-site requests too, so a cookie-authenticated
  // mutation must come from our own origin. API keys are never sent implicitly and are not affected.
  if (actor && !isSafeMethod(req.method) && !isSameOriginRequest(req)) {
    throw new DomainError("forbidden", "Cross-site request refused: a request authenticated by the console session cookie must come from this origin (Origin or Sec-Fetch-Site: same-origin).");
  }
  return actor ? { actor, via: "cookie" } : null;
}
