import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { sendJson } from "../shared/respond";
import { isSafeMethod, isSameOriginRequest } from "../shared/same-origin";
import { type RateLimiter, refuseUpgrade, sendRateLimited } from "./rate-limit";

/**
 * The request guard in front of every route: security headers on every response, the rate
 * limits of rate-limit.ts, and the same-origin rule (server/api/shared/same-origin.ts) of login
 * requests.
 */

/** The CSP of JSON/SSE routes: nothing may load or frame them. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * The CSP of console pages. Next.js (App Router) streams its payload in inline scripts, so
 * scripts need 'unsafe-inline' (nonces would force every page to render dynamically); the
 * development server also needs 'unsafe-eval'. Everything else is same-origin only.
 */
export function pageCsp(development: boolean): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'unsafe-inline'${development ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** Sets the headers every response carries (routes may add more; none removes these); `development`: the pages' CSP of the Next.js development server. */
export function setSecurityHeaders(res: ServerResponse, kind: "api" | "page", development: boolean): void {
  res.setHeader("x-content-type-options", "nosniff");
  // Not `no-referrer`: browsers then send `Origin: null` on same-origin POSTs, which would defeat the origin checks.
  res.setHeader("referrer-policy", "same-origin");
  res.setHeader("x-frame-options", "DENY");
  res.setHeader("cross-origin-opener-policy", "same-origin");
  res.setHeader("content-security-policy", kind === "api" ? API_CSP : pageCsp(development));
}

/** Paths the rate limiter covers: the API, the metrics, tRPC and login (pages and their assets are not limited). */
export const isLimitedPath = (path: string): boolean => path === "/v1" || path === "/metrics" || path.startsWith("/v1/") || path.startsWith("/api/trpc") || path.startsWith("/api/auth");

/** What the guard knows of the server: the development CSP, and the public URL whose origin is this server's. */
export type TGuardSettings = { development: boolean; publicUrl?: string };

/**
 * The pipeline step of app.ts: headers, the rate limit, and the same-origin rule for login
 * endpoints (`POST /api/auth/*`: sign-in, sign-out… only from the console's own pages, which also
 * stops login CSRF; not left to better-auth, whose own check is off under NODE_ENV=test).
 * Returns true when it answered the request itself.
 */
export function guardRequest(limiter: RateLimiter | null, req: IncomingMessage, res: ServerResponse, url: URL, kind: "api" | "page", settings: TGuardSettings): boolean {
  setSecurityHeaders(res, kind, settings.development);
  if (limiter && isLimitedPath(url.pathname)) {
    const admission = limiter.admit(req, url);
    if (!admission.ok) {
      req.resume();
      sendRateLimited(res, admission.retryAfter);
      return true;
    }
    res.once("finish", () => admission.settle(res.statusCode));
    if (req.method === "POST" && url.pathname.startsWith("/api/auth/sign-in/")) {
      const wait = limiter.admitSignIn(req);
      if (wait > 0) {
        req.resume();
        sendRateLimited(res, wait);
        return true;
      }
    }
  }
  if (url.pathname.startsWith("/api/auth/") && !isSafeMethod(req.method)) {
    if (!isSameOriginRequest(req, settings.publicUrl)) {
      req.resume();
      sendJson(res, 403, { detail: "Cross-site request refused: sign-in and sign-out are accepted only from this origin.", code: "forbidden" });
      return true;
    }
    // better-auth buffers whatever body it is given: login bodies must declare a small length.
    const length = Number(req.headers["content-length"] ?? Number.NaN);
    if (req.headers["transfer-encoding"] || (req.headers["content-length"] !== undefined && !(length <= MAX_AUTH_BODY_BYTES))) {
      req.resume();
      sendJson(res, 413, { detail: `Login requests must declare a Content-Length of at most ${MAX_AUTH_BODY_BYTES} bytes.`, code: "payload_too_large" });
      return true;
    }
  }
  return false;
}

/** Sign-in and sign-out bodies are a few hundred bytes. */
export const MAX_AUTH_BODY_BYTES = 64 * 1024;

/** The upgrade step of app.ts: rate limit `WS /v1/live`. Returns true when it refused the upgrade. */
export function guardUpgrade(limiter: RateLimiter | null, req: IncomingMessage, socket: Duplex, url: URL): boolean {
  if (!limiter) return false;
  const admission = limiter.admit(req, url);
  if (admission.ok) return false;
  refuseUpgrade(socket, admission.retryAfter);
  return true;
}
