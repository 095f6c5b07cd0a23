import type { IncomingMessage } from "node:http";
import { userIdForApiKey } from "../../auth/api-keys";
import { sessionUserId, type TAuth } from "../../auth/auth";
import { actorOf } from "../../auth/users";
import type { TActor } from "../../core/actor";
import type { Db } from "../../../db/client";

export type TIdentity = { actor: TActor; via: "api_key" | "cookie" };

/**
 * Resolves the caller: `Authorization: Bearer <key>`, then `?access_token=<key>` (browsers
 * that cannot set headers), then the console session cookie.
 */
export async function identify(db: Db, auth: TAuth, req: IncomingMessage, url: URL): Promise<TIdentity | null> {
  const header = req.headers.authorization;
  const bearer = header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  const key = bearer ?? url.searchParams.get("access_token");
  if (header && !bearer) return null;
  if (key) {
    const userId = await userIdForApiKey(db, key);
    const actor = userId ? await actorOf(db, userId) : null;
    return actor ? { actor, via: "api_key" } : null;
  }
  const userId = await sessionUserId(auth, req.headers);
  const actor = userId ? await actorOf(db, userId) : null;
  return actor ? { actor, via: "cookie" } : null;
}
