import type { IncomingMessage, ServerResponse } from "node:http";
import { toNodeHandler } from "better-auth/node";
import { CLIENT_ADDRESS_HEADER, type TAuth } from "../../auth/auth";
import { SSO_PROVIDER_ID, withSsoSignIn } from "../../auth/sso";
import type { TSignInConfig } from "../../auth/sso-config";
import type { TTrustedProxies } from "../../config";
import { DomainError } from "../../core/errors";
import { safeNextPath } from "../../core/safe-next";
import { clientAddress } from "../shared/client-address";
import { sendError } from "./errors";

/** better-auth's routes this server does not offer: sign-in starts at `/api/sso/start` (with `state`, PKCE and `nonce`), never from a client's own ID token. */
const CLOSED_AUTH_PATHS = new Set(["/api/auth/sign-in/social", "/api/auth/sign-in/oauth2", "/api/auth/link-social", "/api/auth/oauth2/link"]);

/** The code the login page shows as "the identity provider cannot be reached". */
export const SSO_UNREACHABLE = "sso_unreachable";

/** How long the start of a sign-in waits for the provider's discovery document before saying it cannot be reached. */
const PROVIDER_CHECK_MS = 5000;

const redirect = (res: ServerResponse, location: string, cookies: string[] = []) => {
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  res.writeHead(302, { location, "cache-control": "no-store" });
  res.end();
};

/**
 * better-auth's routes (`/api/auth/*`), with the client address this server resolved (never one a
 * client wrote) and room for a single sign-on's claims in each request (server/auth/sso.ts).
 */
export function createAuthRoute(auth: TAuth, trustedProxies: TTrustedProxies) {
  const handle = toNodeHandler(auth);
  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    if (CLOSED_AUTH_PATHS.has(path)) return sendError(res, new DomainError("not_found", `There is no ${path} here: single sign-on starts at /api/sso/start.`));
    req.headers[CLIENT_ADDRESS_HEADER] = clientAddress(req, trustedProxies);
    await withSsoSignIn(() => handle(req, res));
  };
}

/**
 * `GET /api/sso/start?next=/path`: starts a single sign-on and redirects the browser to the
 * provider (better-auth keeps `state`, the PKCE verifier and the `nonce` for the callback). The
 * provider unreachable (its discovery document cannot be read) sends the browser back to the login
 * page, which says so; without single sign-on this is a 404.
 */
export function createSsoStart(auth: TAuth, signIn: TSignInConfig, baseUrl: string) {
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    if (!signIn.sso) return sendError(res, new DomainError("not_found", "Single sign-on is not configured on this server."));
    // The provider must answer now, or the browser would be sent to a page that does not load.
    const reachable = await fetch(signIn.sso.discoveryUrl, { signal: AbortSignal.timeout(PROVIDER_CHECK_MS) }).then(
      (r) => r.ok,
      () => false,
    );
    if (!reachable) return redirect(res, `/login?error=${SSO_UNREACHABLE}`);
    const body = JSON.stringify({ provider: SSO_PROVIDER_ID, callbackURL: safeNextPath(url.searchParams.get("next"), baseUrl), errorCallbackURL: "/login", disableRedirect: true });
    const headers = new Headers({ "content-type": "application/json", origin: new URL(baseUrl).origin });
    if (req.headers.cookie) headers.set("cookie", req.headers.cookie);
    const response = await auth.handler(new Request(`${baseUrl}/api/auth/sign-in/social`, { method: "POST", headers, body }));
    const answer = response.ok ? ((await response.json().catch(() => null)) as { url?: unknown } | null) : null;
    if (typeof answer?.url !== "string") return redirect(res, `/login?error=${SSO_UNREACHABLE}`);
    redirect(res, answer.url, response.headers.getSetCookie());
  };
}
