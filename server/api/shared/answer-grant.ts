import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { actorForKeyId } from "../../auth/api-keys";
import type { TAuth } from "../../auth/auth";
import type { TActor } from "../../core/actor";
import { DomainError } from "../../core/errors";
import type { TDeps } from "../../host/deps";
import { isSafeMethod, isSameOriginRequest } from "./same-origin";

/*
 * The answer-link grant: the short-lived HttpOnly cookie an `/answer/{id}?access_token=` link is
 * exchanged for (server/api/http/answer-link.ts), and who it stands for when a request brings it
 * back (the question's tRPC procedures, its run's files).
 */

/** How long the exchanged cookie works. */
export const ANSWER_GRANT_TTL_MS = 15 * 60_000;

/**
 * Only `/api` requests carry it, and only the question's tRPC procedures and its run's files
 * (`/api/answer/{id}/files/…`, server/api/http/answer-files.ts) read it: it opens no page, no
 * `/v1` route, no WebSocket.
 */
const COOKIE_PATH = "/api";

/** One cookie per question (names cannot hold every character an id may have, hence the hash). */
export const answerCookieName = (questionId: string): string => `cs_answer_${createHash("sha256").update(questionId).digest("hex").slice(0, 24)}`;

async function grantKey(auth: TAuth): Promise<Buffer> {
  const { secret } = await auth.$context;
  // Derived, so a grant MAC can never be mistaken for anything else signed with the auth secret.
  return createHmac("sha256", secret).update("countersign answer-link grant v1").digest();
}

const mac = (key: Buffer, questionId: string, keyId: string, expiresMs: number): Buffer => createHmac("sha256", key).update(`${questionId}\n${keyId}\n${expiresMs}`).digest();

/** The `Set-Cookie` value of a grant for `questionId` to the holder of API key `keyId`. */
export async function answerGrantCookie(deps: Pick<TDeps, "now"> & { auth: TAuth }, questionId: string, keyId: string, secure: boolean): Promise<string> {
  const expiresMs = deps.now().getTime() + ANSWER_GRANT_TTL_MS;
  const value = `${keyId}.${expiresMs}.${mac(await grantKey(deps.auth), questionId, keyId, expiresMs).toString("base64url")}`;
  const attributes = [`Path=${COOKIE_PATH}`, `Max-Age=${ANSWER_GRANT_TTL_MS / 1000}`, "HttpOnly", "SameSite=Strict", ...(secure ? ["Secure"] : [])];
  return `${answerCookieName(questionId)}=${value}; ${attributes.join("; ")}`;
}

function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return null;
}

/**
 * The actor an answer-link cookie stands for, for `questionId` only: null unless the cookie was
 * issued for that question, has not expired, and its key is still unrevoked and its owner active.
 * Like the console cookie, it authorizes a mutation only from this origin.
 */
export async function answerLinkActor(deps: Pick<TDeps, "db" | "now"> & { auth: TAuth; publicUrl?: string }, req: IncomingMessage, questionId: string): Promise<TActor | null> {
  const value = cookieValue(req.headers.cookie, answerCookieName(questionId));
  const [keyId = "", expires = "", signature = ""] = value?.split(".") ?? [];
  const expiresMs = Number(expires);
  if (!value || !/^\d+$/.test(expires) || expiresMs <= deps.now().getTime()) return null;
  const expected = mac(await grantKey(deps.auth), questionId, keyId, expiresMs);
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  if (!isSafeMethod(req.method) && !isSameOriginRequest(req, deps.publicUrl)) {
    throw new DomainError("forbidden", "Cross-site request refused: an answer link works only from this origin.");
  }
  return actorForKeyId(deps.db, keyId);
}
