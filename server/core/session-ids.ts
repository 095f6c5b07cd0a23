import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const PREFIX = "sess_";

const tag = (key: Buffer, userId: string, nonce: string): string =>
  createHmac("sha256", key).update(`countersign session id\0${userId}\0${nonce}`).digest("hex").slice(0, 16);

/**
 * A session id handed out before its session exists (a bare WebSocket connect stores nothing until
 * the first run): `sess_<16 hex nonce><16 hex tag>`, the tag binding it to the user it was minted
 * for, so only that user can later create the session under it and nobody can claim it first.
 */
export function mintSessionId(key: Buffer, userId: string): string {
  const nonce = randomBytes(8).toString("hex");
  return `${PREFIX}${nonce}${tag(key, userId, nonce)}`;
}

/** Was this session id minted for this user (by any replica sharing the secret key)? */
export function isSessionIdMintedFor(key: Buffer, userId: string, sessionId: string): boolean {
  const match = /^sess_([0-9a-f]{16})([0-9a-f]{16})$/.exec(sessionId);
  if (!match) return false;
  const [, nonce = "", given = ""] = match;
  return timingSafeEqual(Buffer.from(tag(key, userId, nonce)), Buffer.from(given));
}
