import type { IncomingMessage, ServerResponse } from "node:http";
import { fromNodeHeaders } from "better-auth/node";
import type { TDeps } from "../../host/deps";
import { CLIENT_ADDRESS_HEADER, type TAuth } from "../../auth/auth";
import { accountOf, clearSignInFailures, reserveSignInAttempt } from "../../auth/sign-in-backoff";
import { passwordSignInAllowed } from "../../auth/users";
import { DomainError } from "../../core/errors";
import { readBodyText } from "../shared/request-body";
import type { TTrustedProxies } from "../../config";
import { clientAddress } from "../shared/client-address";
import { sendJson } from "../shared/respond";
import { sendError } from "./errors";
import { MAX_AUTH_BODY_BYTES } from "./guard";

/** The email of a sign-in body, when it has the shape better-auth accepts; else null (better-auth answers 400). */
function signInEmail(text: string): string | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const email = (body as { email?: unknown } | null)?.email;
  // Only something that can be an address is counted: malformed input changes nothing.
  return typeof email === "string" && email.length <= 254 && /^[^@\s]+@[^@\s]+$/.test(email.trim()) ? email : null;
}

/** Writes a fetch Response (better-auth's) to the Node response, keeping every Set-Cookie. */
async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  for (const [name, value] of response.headers) if (name !== "set-cookie") res.setHeader(name, value);
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  const body = Buffer.from(await response.arrayBuffer());
  res.setHeader("content-length", body.length);
  res.writeHead(response.status);
  res.end(body);
}

/**
 * `POST /api/auth/sign-in/email`: the per-account backoff around better-auth's password check.
 * A waiting account gets 429 with `Retry-After` (correct password or not) before any password is
 * compared; a success clears the count. better-auth records the client address that
 * client-address.ts resolved, never a forwarded header the client wrote.
 */
export function createEmailSignIn(deps: Pick<TDeps, "db" | "now"> & { auth: TAuth }, trustedProxies: TTrustedProxies, passwordLogin: boolean) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let text: string;
    try {
      text = await readBodyText(req, MAX_AUTH_BODY_BYTES);
    } catch (error) {
      if (error instanceof DomainError) return sendError(res, error);
      throw error;
    }
    const email = signInEmail(text);
    // Password sign-in off (single sign-on only): refused before any password is compared, except for break-glass users.
    if (!(await passwordSignInAllowed(deps.db, passwordLogin, email))) {
      return sendJson(res, 403, { detail: "Password sign-in is off on this server: sign in with single sign-on.", code: "password_login_off" });
    }
    const account = email === null ? null : accountOf(email);
    if (account !== null) {
      const reservation = await reserveSignInAttempt(deps.db, account, deps.now());
      if (!reservation.ok) {
        const s = reservation.retryAfter;
        return sendJson(
          res,
          429,
          { detail: `Too many failed sign-ins for this account; try again in ${s} second${s === 1 ? "" : "s"}.`, code: "rate_limited" },
          { "retry-after": String(s) },
        );
      }
    }
    const headers = fromNodeHeaders(req.headers);
    headers.delete("content-length");
    headers.delete("transfer-encoding");
    headers.set(CLIENT_ADDRESS_HEADER, clientAddress(req, trustedProxies));
    const response = await deps.auth.handler(new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, { method: "POST", headers, body: text }));
    if (account !== null && response.ok) await clearSignInFailures(deps.db, account);
    await writeResponse(res, response);
  };
}
