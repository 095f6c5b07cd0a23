import type { ServerResponse } from "node:http";
import { actorForApiKey } from "../../auth/api-keys";
import type { TAuth } from "../../auth/auth";
import type { TDeps } from "../../host/deps";
import { answerGrantCookie } from "../shared/answer-grant";

/**
 * `/answer/{id}?access_token=<api key>`: the key is taken once, exchanged for a short-lived
 * HttpOnly cookie that lets its holder read and answer that one question (as the key's owner), and
 * the browser is sent on to `/answer/{id}` without the key. The page never sees the key, so it can
 * neither send it again nor leak it through history, a Referer or a screenshot of the address bar.
 * The cookie itself, and who it stands for: server/api/shared/answer-grant.ts.
 */

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
  if (found) res.setHeader("set-cookie", await answerGrantCookie(deps, questionId, found.keyId, secure));
  else next.set("link", "invalid");
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
