import { AsyncLocalStorage } from "node:async_hooks";
import { APIError } from "better-auth";
import { genericOAuth } from "better-auth/plugins";
import type { Db } from "../../db/client";
import { recordAdminEvent } from "../../db/repositories/audit";
import { lockUserRoleAndGroups, setUserRoleAndGroups, userIdByEmail, userIdBySsoAccount } from "../../db/repositories/users";
import type { TAdminOrigin } from "../core/admin-trail";
import { DomainError } from "../core/errors";
import { sameList } from "../core/lists";
import type { TRole } from "../core/vocabulary";
import { groupsOfClaim, roleForGroups, type TSsoConfig } from "./sso-config";
import { addSsoUser } from "./new-user";

/** better-auth's id of the one OpenID Connect provider: its callback is `/api/auth/callback/oidc`. */
export const SSO_PROVIDER_ID = "oidc";

/** The refusal of a person the group mapping gives no role (`defaultRole: deny`); the login page words its code. */
export const noSsoRole = () => new APIError("FORBIDDEN", { message: "Your account at the identity provider is in no group that may use Countersign.", code: "SSO_NO_ROLE" });

/** What the provider said about the person signing in, verified, for the rest of the same request. */
type TSsoClaims = { subject: string; email: string; name: string | undefined; groups: string[]; role: TRole | null };

const signIns = new AsyncLocalStorage<{ claims?: TSsoClaims }>();

/**
 * Runs one request to better-auth with room for the claims of a single sign-on: the provider's
 * profile is read (after the ID token is verified) and the login session is created in the same
 * request, by different better-auth callbacks.
 */
export const withSsoSignIn = <T>(handle: () => Promise<T>): Promise<T> => signIns.run({}, handle);

const trailOrigin = (clientIp: string | null): TAdminOrigin => ({ channel: "sso", clientIp });

/**
 * The OpenID Connect provider as better-auth's generic OAuth plugin: discovery, authorization code
 * with PKCE (S256), `state` and `nonce` checked, the ID token verified against the provider's keys
 * (issuer, audience, expiry, signature; a key it does not know yet is fetched again). The profile is
 * read only after that: the person's groups give the role, and a person seen for the first time is
 * added here (just in time) with Countersign's own user code and linked to the provider's subject,
 * so better-auth finds the account and only creates the login session. A user who exists here with
 * the same email but is not linked yet is linked by better-auth only when the provider says the
 * email is verified (`email_verified`).
 */
export function ssoPlugin(db: Db, config: TSsoConfig) {
  return genericOAuth({
    config: [
      {
        providerId: SSO_PROVIDER_ID,
        name: config.name,
        discoveryUrl: config.discoveryUrl,
        clientId: config.clientId,
        clientSecret: config.clientSecret,
        scopes: config.scopes,
        pkce: true,
        requireIdTokenVerification: true,
        mapProfileToUser: async (profile) => {
          const store = signIns.getStore();
          const email = typeof profile.email === "string" ? profile.email.toLowerCase() : "";
          const name = typeof profile.name === "string" ? profile.name : typeof profile.preferred_username === "string" ? profile.preferred_username : undefined;
          const groups = groupsOfClaim((profile as Record<string, unknown>)[config.groupsClaim]);
          const claims: TSsoClaims = { subject: String(profile.sub ?? profile.id ?? ""), email, name, groups, role: roleForGroups(config, groups) };
          if (store) store.claims = claims;
          // A person not seen before (by this provider's subject, or by email) is added now.
          if (claims.role !== null && email && claims.subject) {
            const known = (await userIdBySsoAccount(db, SSO_PROVIDER_ID, claims.subject)) ?? (await userIdByEmail(db, email));
            if (known === null) {
              const person = { name, email, role: claims.role, groups, providerId: SSO_PROVIDER_ID, subject: claims.subject };
              // Two first sign-ins of the same person at once: the one that lost finds the other's user.
              await addSsoUser(db, person, { actor: null, origin: trailOrigin(null) }).catch((error: unknown) => {
                if (!(error instanceof DomainError && error.code === "conflict")) throw error;
              });
            }
          }
          return {};
        },
      },
    ],
  });
}

/**
 * Before better-auth creates a login session in a single sign-on: refuses a person the mapping
 * gives no role (`defaultRole: deny`), and applies the provider's groups to the user as they are
 * now: the role (a change is an admin-trail row, `user.role_changed` from `sso`) and the teams.
 * Returns whether the role or the teams changed: the user's cached credentials are then read again,
 * and its open connections admitted with another role reconnect with the new one.
 */
export async function applySsoSignIn(db: Db, userId: string, clientIp: string | null): Promise<{ changed: boolean }> {
  const claims = signIns.getStore()?.claims;
  if (!claims) return { changed: false };
  if (claims.role === null) throw noSsoRole();
  const role = claims.role;
  return db.transaction(async (transaction) => {
    const tx = transaction as unknown as Db;
    const user = await lockUserRoleAndGroups(tx, userId);
    if (!user) return { changed: false };
    if (user.role === role && sameList(user.groups, claims.groups)) return { changed: false };
    await setUserRoleAndGroups(tx, userId, role, claims.groups);
    if (user.role !== role) {
      await recordAdminEvent(tx, { actor: null, origin: trailOrigin(clientIp) }, { action: "user.role_changed", targetType: "user", targetId: userId, detail: { name: user.name, from: user.role, to: role, groups: claims.groups } });
    }
    return { changed: true };
  });
}

/** Whether this request is a single sign-on (the provider's profile was read in it). */
export const isSsoSignIn = (): boolean => signIns.getStore()?.claims !== undefined;
