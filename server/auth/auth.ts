import type { IncomingHttpHeaders } from "node:http";
import { APIError, betterAuth } from "better-auth";
import { fromNodeHeaders } from "better-auth/node";
import { betterAuthDatabase } from "../../db/auth-adapter";
import type { Db } from "../../db/client";
import { userDisabledDeletedAt } from "../../db/repositories/users";
import { applySsoSignIn, isSsoSignIn, noSsoRole, ssoPlugin } from "./sso";
import type { TSsoConfig } from "./sso-config";

/**
 * How the sign-in route hands better-auth the client address it resolved (server/api/http/
 * client-address.ts); the route overwrites whatever a client sent in it.
 */
export const CLIENT_ADDRESS_HEADER = "x-countersign-client-address";

/** Why better-auth's own user update refuses a name. */
export const NAME_CHANGE_REFUSED =
  "Display names change only through Countersign: your own with settings.setName in the console, anyone's by an admin (admin.renameUser or the CLI's `user rename`); the name is checked and the change recorded.";

/**
 * Console login (email + password, and single sign-on through an OpenID Connect provider when
 * `sso` is set: server/auth/sso.ts) with a session cookie, through better-auth on our own tables.
 * `onCredentialsChanged` hears every login session deleted (sign-out, disable) and every role a
 * single sign-on changed, so open connections admitted before re-check at once.
 */
export function createAuth(options: { db: Db; secret: string; baseURL: string; sso?: TSsoConfig | null; onCredentialsChanged?: (userId: string) => void }) {
  const sso = options.sso ?? null;
  return betterAuth({
    secret: options.secret,
    baseURL: options.baseURL,
    basePath: "/api/auth",
    database: betterAuthDatabase(options.db),
    user: {
      modelName: "users",
      additionalFields: { role: { type: "string", input: false, defaultValue: "member" } },
    },
    session: { modelName: "login_sessions", expiresIn: 60 * 60 * 24 * 7 },
    // A user an admin added before single sign-on (same email) is linked to the provider's account
    // at its first sign-in only when the provider says that email is verified (`email_verified`).
    account: { modelName: "accounts", accountLinking: { requireLocalEmailVerified: false } },
    verification: { modelName: "verifications" },
    databaseHooks: {
      // Users are created and renamed only by Countersign's own code (server/auth/users.ts,
      // server/services/console/user-rename.ts), which checks that the display name is free and
      // writes the admin trail. better-auth's own paths (POST /api/auth/update-user with a name…)
      // would do neither: they are refused.
      user: {
        create: {
          // A single sign-on adds a new person itself, before this (server/auth/sso.ts); it comes
          // here only for a person the group mapping refuses.
          before: async () => {
            if (isSsoSignIn()) throw noSsoRole();
            throw new APIError("FORBIDDEN", { message: "Users are added by an admin (the console or the CLI's `user add`).", code: "USER_CREATION_DISABLED" });
          },
        },
        update: {
          before: async (user) => {
            if (user.name !== undefined) throw new APIError("FORBIDDEN", { message: NAME_CHANGE_REFUSED, code: "NAME_CHANGE_DISABLED" });
          },
        },
      },
      session: {
        create: {
          // A disabled or deleted user keeps its password hash only until deletion: refuse the login itself.
          before: async (session) => {
            const user = await userDisabledDeletedAt(options.db, session.userId);
            if (user?.disabledAt || user?.deletedAt) throw new APIError("FORBIDDEN", { message: "This account is disabled; ask an admin to enable it again.", code: "ACCOUNT_DISABLED" });
            // A single sign-on: the role and teams from the provider's groups as they are now.
            const { changed } = await applySsoSignIn(options.db, session.userId, session.ipAddress ?? null);
            if (changed) options.onCredentialsChanged?.(session.userId);
          },
        },
        delete: { after: async (session) => options.onCredentialsChanged?.(session.userId) },
      },
    },
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 8 },
    plugins: sso ? [ssoPlugin(options.db, sso)] : [],
    // Where a failed single sign-on lands (a used or unknown `state`, a refused person): the login
    // page, which says why from the `error` code.
    onAPIError: { errorURL: "/login" },
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
    // Behind TLS (COUNTERSIGN_PUBLIC_URL is https) the session cookie is `Secure` (and `__Secure-` prefixed).
    advanced: { ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] }, useSecureCookies: options.baseURL.startsWith("https://") },
    telemetry: { enabled: false },
    logger: { disabled: true },
  });
}

export type TAuth = ReturnType<typeof createAuth>;

/** The console user and login session behind a session cookie, if any. */
export async function consoleSession(auth: TAuth, headers: IncomingHttpHeaders | Headers): Promise<{ userId: string; sessionId: string } | null> {
  const h = headers instanceof Headers ? headers : fromNodeHeaders(headers);
  if (!h.get("cookie")) return null;
  const found = await auth.api.getSession({ headers: h }).catch(() => null);
  return found ? { userId: found.user.id, sessionId: found.session.id } : null;
}
