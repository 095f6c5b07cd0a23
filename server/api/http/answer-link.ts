import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { actorForApiKey, actorForKeyId } from "../../auth/api-keys";
import type { TAuth } from "../../auth/auth";
import type { TActor } from "../../core/actor";
import { DomainError } from "../../core/errors";
import type { TDeps } from "../../host/deps";
import { isSafeMethod, isSameOriginRequest } from "./guard";

/**
 * `/answer/{id}?access_token=<api key>`: the key is taken once, exchanged for a short-lived
 * HttpOnly cookie that lets its holder read and answer that one question (as the key's owner), and
 * the browser is sent on to `/answer/{id}` without the key. The page never sees the key, so it can
 * neither send it again nor leak it through history, a Referer or a screenshot of the address bar.
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

/** The question id of an `/answer/{id}` path, or null for any other path. */
export function answerPathQuestionId(pathname: string): string | null {
  const segment = pathname.match(/^\/answer\/([^/]+)\/?$/)?.[1];
  if (!segment) return null;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/**
 * Answers `GET /answer/{id}?access_token=…` with a 303 to the same page without the key: with the
 * question-bound cookie when the key works, else with `?link=invalid` (the page says so and offers
 * sign-in). The key is never echoed, logged or stored.
 */
export async function exchangeAnswerLink(deps: Pick<TDeps, "db" | "now"> & { auth: TAuth }, res: ServerResponse, url: URL, secure: boolean): Promise<void> {
  const questionId = answerPathQuestionId(url.pathname) ?? "";
  const found = await actorForApiKey(deps.db, url.searchParams.get("access_token") ?? "");
  const next = new URLSearchParams(url.searchParams);
  next.delete("access_token");
  next.delete("link");
  if (found) {
    const expiresMs = deps.now().getTime() + ANSWER_GRANT_TTL_MS;
    const value = `${found.keyId}.${expiresMs}.${mac(await grantKey(deps.auth), questionId, found.keyId, expiresMs).toString("base64url")}`;
    const attributes = [`Path=${COOKIE_PATH}`, `Max-Age=${ANSWER_GRANT_TTL_MS / 1000}`, "HttpOnly", "SameSite=Strict", ...(secure ? ["Secure"] : [])];
    res.setHeader("set-cookie", `${answerCookieName(questionId)}=${value}; ${attributes.join("; ")}`);
  } else next.set("link", "invalid");
  const query = next.toString();
  res.writeHead(303, {
    location: `/answer/${encodeURIComponent(questionId)}${query ? `?${query}` : ""}`,
    "cache-control": "no-store",
    // The request URL held the key: nothing after it may be told where it came from.
    "referrer-policy": "no-referrer",
    "content-length": 0,
  });
  res.end();
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
export async function answerLinkActor(deps: Pick<TDeps, "db" | "now"> & { auth: TAuth }, req: IncomingMessage, questionId: string): Promise<TActor | null> {
  const value = cookieValue(req.headers.cookie, answerCookieName(questionId));
  const [keyId = "", expires = "", signature = ""] = value?.split(".") ?? [];
  const expiresMs = Number(expires);
  if (!value || !/^\d+$/.test(expires) || expiresMs <= deps.now().getTime()) return null;
  const expected = mac(await grantKey(deps.auth), questionId, keyId, expiresMs);
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  if (!isSafeMethod(req.method) && !isSameOriginRequest(req)) {
    throw new DomainError("forbidden", "Cross-site request refused: an answer link works only from this origin.");
  }
  return actorForKeyId(deps.db, keyId);
}
