import type { IncomingHttpHeaders } from "node:http";
import { betterAuth } from "better-auth";
import { drizzleAdapter } from "better-auth/adapters/drizzle";
import { fromNodeHeaders } from "better-auth/node";
import type { Db } from "../../db/client";
import { accounts, loginSessions, users, verifications } from "../../db/schema";

/**
 * How the sign-in route hands better-auth the client address it resolved (server/api/http/
 * client-address.ts); the route overwrites whatever a client sent in it.
 */
export const CLIENT_ADDRESS_HEADER = "x-countersign-client-address";

/** Console login (email + password, session cookie) through better-auth on our own tables. */
export function createAuth(options: { db: Db; secret: string; baseURL: string }) {
  return betterAuth({
    secret: options.secret,
    baseURL: options.baseURL,
    basePath: "/api/auth",
    database: drizzleAdapter(options.db, {
      provider: "pg",
      schema: { users, login_sessions: loginSessions, accounts, verifications },
    }),
    user: {
      modelName: "users",
      additionalFields: { role: { type: "string", input: false, defaultValue: "member" } },
    },
    session: { modelName: "login_sessions", expiresIn: 60 * 60 * 24 * 7 },
    account: { modelName: "accounts" },
    verification: { modelName: "verifications" },
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 8 },
    // Same-origin check for cookie-authenticated auth calls: the Origin must be this host.
    trustedOrigins: (request) => {
      const host = request?.headers.get("host");
      return host ? [`http://${host}`, `https://${host}`] : [];
    },
    // Sign-ins are limited per client address and per account by our own routes (guard.ts,
    // server/auth/sign-in-backoff.ts): better-auth's limiter keys on X-Forwarded-For, which any
    // client can write, and answers 429 without Retry-After.
    rateLimit: { enabled: false },
    // The address recorded with a login session is the one our sign-in route resolved.
    advanced: { ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] } },
    telemetry: { enabled: false },
    logger: { disabled: true },
  });
}

export type TAuth = ReturnType<typeof createAuth>;

/** The console user behind a session cookie, if any. */
export async function sessionUserId(auth: TAuth, headers: IncomingHttpHeaders | Headers): Promise<string | null> {
  const h = headers instanceof Headers ? headers : fromNodeHeaders(headers);
  if (!h.get("cookie")) return null;
  const session = await auth.api.getSession({ headers: h }).catch(() => null);
  return session?.user.id ?? null;
}
