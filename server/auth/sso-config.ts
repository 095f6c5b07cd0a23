import { z } from "zod";
import type { TRole } from "../core/vocabulary";

/** The roles a group can map to, highest first: a person in several mapped groups gets the first that matches. */
export const SSO_ROLE_ORDER = ["admin", "operator", "auditor", "member"] as const satisfies readonly TRole[];

const ZGroups = z.array(z.string().trim().min(1).max(256)).max(1000);

/**
 * Single sign-on through an OpenID Connect provider (docs/sso.md). The agents file's `sso` section
 * has these keys; each `COUNTERSIGN_OIDC_*` variable overrides its key.
 */
export const ZSsoSection = z.strictObject({
  /** The issuer; its discovery document is `<issuer>/.well-known/openid-configuration`. */
  issuer: z.url({ protocol: /^https?$/, error: "must be the provider's issuer URL, such as https://id.example.com/realms/acme" }),
  clientId: z.string().trim().min(1),
  clientSecret: z.string().min(1).optional(),
  /** Default `openid email profile groups`. */
  scopes: z.array(z.string().trim().min(1)).min(1).optional(),
  /** The ID token claim that lists the person's groups (default `groups`). */
  groupsClaim: z.string().trim().min(1).optional(),
  /** Which groups give which role: admin > operator > auditor > member. */
  roleMap: z.strictObject({ admin: ZGroups.optional(), operator: ZGroups.optional(), auditor: ZGroups.optional(), member: ZGroups.optional() }).optional(),
  /** The role of a person in no mapped group: `member` (default) or `deny` (refused). */
  defaultRole: z.enum(["member", "deny"]).optional(),
  /** The sign-in button reads "Sign in with <name>" (default `SSO`). */
  name: z.string().trim().min(1).max(60).optional(),
  /** `off`: password sign-in is hidden and refused except for users the CLI added with `--break-glass`. */
  passwordLogin: z.enum(["on", "off"]).optional(),
});

export type TSsoSection = z.infer<typeof ZSsoSection>;

export type TSsoConfig = {
  issuer: string;
  discoveryUrl: string;
  clientId: string;
  clientSecret: string | undefined;
  scopes: string[];
  groupsClaim: string;
  roleMap: Record<(typeof SSO_ROLE_ORDER)[number], string[]>;
  defaultRole: "member" | "deny";
  name: string;
};

/** How people may sign in to the console: single sign-on when configured, and passwords unless turned off. */
export type TSignInConfig = { sso: TSsoConfig | null; passwordLogin: boolean };

type TEnv = Readonly<Record<string, string | undefined>>;

const VARIABLES = {
  issuer: "COUNTERSIGN_OIDC_ISSUER",
  clientId: "COUNTERSIGN_OIDC_CLIENT_ID",
  clientSecret: "COUNTERSIGN_OIDC_CLIENT_SECRET",
  scopes: "COUNTERSIGN_OIDC_SCOPES",
  groupsClaim: "COUNTERSIGN_OIDC_GROUPS_CLAIM",
  roleMap: "COUNTERSIGN_OIDC_ROLE_MAP",
  defaultRole: "COUNTERSIGN_OIDC_DEFAULT_ROLE",
  name: "COUNTERSIGN_OIDC_NAME",
  passwordLogin: "COUNTERSIGN_PASSWORD_LOGIN",
} as const satisfies Record<keyof TSsoSection, string>;

const set = (value: string | undefined): string | undefined => (value?.trim() ? value.trim() : undefined);

/**
 * The sign-in configuration from the environment over the agents file's `sso` section. Throws one
 * error naming every bad variable or key. Without an issuer there is no single sign-on; a client id
 * without an issuer (or the other way round) is an error, never a silent fallback to passwords.
 */
export function signInConfigFrom(env: TEnv, file: Partial<TSsoSection> | undefined): TSignInConfig {
  const problems: string[] = [];
  let roleMap: unknown = file?.roleMap;
  const rawMap = set(env[VARIABLES.roleMap]);
  if (rawMap !== undefined) {
    try {
      roleMap = JSON.parse(rawMap);
    } catch {
      problems.push(`${VARIABLES.roleMap} is not JSON: use {"admin":["group"],"operator":[…],"auditor":[…],"member":[…]}`);
    }
  }
  const rawScopes = set(env[VARIABLES.scopes]);
  const merged = {
    ...file,
    ...Object.fromEntries(
      (["issuer", "clientId", "clientSecret", "groupsClaim", "defaultRole", "name", "passwordLogin"] as const).flatMap((key) => {
        const value = key === "clientSecret" ? env[VARIABLES[key]] || undefined : set(env[VARIABLES[key]]);
        return value === undefined ? [] : [[key, key === "defaultRole" || key === "passwordLogin" ? value.toLowerCase() : value]];
      }),
    ),
    ...(rawScopes === undefined ? {} : { scopes: rawScopes.split(/[\s,]+/).filter(Boolean) }),
    ...(roleMap === undefined ? {} : { roleMap }),
  };
  const passwordLogin = merged.passwordLogin ?? "on";
  const configured = merged.issuer !== undefined || merged.clientId !== undefined;
  const parsed = configured ? ZSsoSection.safeParse(merged) : ZSsoSection.pick({ passwordLogin: true }).safeParse({ passwordLogin });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path[0] as keyof TSsoSection | undefined;
      const where = key ? `${VARIABLES[key]} (sso.${issue.path.join(".")} in the agents file)` : "the sso settings";
      problems.push(`${where}: ${issue.message}`);
    }
  }
  if (problems.length > 0) throw new Error(`Invalid single sign-on settings: ${problems.join("; ")}`);
  if (!configured || !parsed.success) {
    if (passwordLogin === "off") throw new Error(`Invalid single sign-on settings: ${VARIABLES.passwordLogin}=off needs single sign-on (${VARIABLES.issuer} and ${VARIABLES.clientId}), or nobody but break-glass users could sign in.`);
    return { sso: null, passwordLogin: true };
  }
  const s = parsed.data as TSsoSection;
  const issuer = s.issuer.replace(/\/+$/, "");
  return {
    sso: {
      issuer,
      discoveryUrl: `${issuer}/.well-known/openid-configuration`,
      clientId: s.clientId,
      clientSecret: s.clientSecret,
      scopes: s.scopes ?? ["openid", "email", "profile", "groups"],
      groupsClaim: s.groupsClaim ?? "groups",
      roleMap: { admin: s.roleMap?.admin ?? [], operator: s.roleMap?.operator ?? [], auditor: s.roleMap?.auditor ?? [], member: s.roleMap?.member ?? [] },
      defaultRole: s.defaultRole ?? "member",
      name: s.name ?? "SSO",
    },
    passwordLogin: passwordLogin !== "off",
  };
}

/** The groups in a claim's value: a list of names (or one name); anything else is no group. */
export function groupsOfClaim(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
  return [...new Set(list.filter((g): g is string => typeof g === "string" && g.trim() !== "").map((g) => g.trim()))].slice(0, 1000);
}

/** The role the groups give (the highest mapped), the default role, or null when such a person is refused. */
export function roleForGroups(config: TSsoConfig, groups: readonly string[]): TRole | null {
  const held = new Set(groups);
  for (const role of SSO_ROLE_ORDER) if (config.roleMap[role].some((g) => held.has(g))) return role;
  return config.defaultRole === "deny" ? null : "member";
}
