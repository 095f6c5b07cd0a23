import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { ROLES } from "../../server/core/vocabulary";

export const roleEnum = pgEnum("role", ROLES);

/** People and API clients. Managed by better-auth (login) plus our `role`. */
export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /**
     * The display name's comparison key (server/core/display-name.ts: NFKC, lower case, invisible
     * characters and extra spaces left out), written with `name` in the same statement. Unique among
     * users not deleted, so two people can never share a name, even when they race for one. Null for
     * a user whose name another user already held when the key was introduced (the older one keeps it).
     */
    nameKey: text("name_key"),
    email: text("email").notNull().unique(),
    emailVerified: boolean("email_verified").notNull().default(false),
    image: text("image"),
    role: roleEnum("role").notNull().default("member"),
    /**
     * The teams the person is in: the identity provider's groups claim, written at every single
     * sign-on (docs/sso.md). Approvers name them (`approvers.groups`).
     */
    groups: text("groups").array().notNull().default(sql`'{}'::text[]`),
    /** Created by the CLI with `--break-glass`: may sign in with a password when COUNTERSIGN_PASSWORD_LOGIN=off. */
    breakGlass: boolean("break_glass").notNull().default(false),
    /** A disabled user's keys, console sessions and sockets stop working at once; its history stays. */
    disabledAt: timestamp("disabled_at", { withTimezone: true }),
    /** A deleted user: credentials removed, email replaced; the id and name stay for the history, the name is free for others. */
    deletedAt: timestamp("deleted_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("users_name_key_idx").on(t.nameKey).where(sql`${t.deletedAt} is null`)],
);

/** Console login sessions (better-auth `session` model). */
export const loginSessions = pgTable(
  "login_sessions",
  {
    id: text("id").primaryKey(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    token: text("token").notNull().unique(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    ipAddress: text("ip_address"),
    userAgent: text("user_agent"),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
  },
  (t) => [index("login_sessions_user_idx").on(t.userId)],
);

/** Credentials (better-auth `account` model); `password` holds better-auth's scrypt hash. */
export const accounts = pgTable("accounts", {
  id: text("id").primaryKey(),
  accountId: text("account_id").notNull(),
  providerId: text("provider_id").notNull(),
  userId: text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  accessToken: text("access_token"),
  refreshToken: text("refresh_token"),
  idToken: text("id_token"),
  accessTokenExpiresAt: timestamp("access_token_expires_at", { withTimezone: true }),
  refreshTokenExpiresAt: timestamp("refresh_token_expires_at", { withTimezone: true }),
  scope: text("scope"),
  password: text("password"),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

export const verifications = pgTable("verifications", {
  id: text("id").primaryKey(),
  identifier: text("identifier").notNull(),
  value: text("value").notNull(),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/** API keys, stored only as SHA-256 hashes of 256-bit random secrets. */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    keyHash: text("key_hash").notNull().unique(),
    prefix: text("prefix").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [index("api_keys_user_idx").on(t.userId)],
);

/**
 * Failed console sign-ins per account (lower-cased email), for the per-account backoff: kept in
 * the database so every replica sees the same count; cleared by a successful sign-in.
 */
export const signInFailures = pgTable("sign_in_failures", {
  account: text("account").primaryKey(),
  failures: integer("failures").notNull().default(0),
  lastFailureAt: timestamp("last_failure_at", { withTimezone: true }).notNull().defaultNow(),
  blockedUntil: timestamp("blocked_until", { withTimezone: true }),
});

/**
 * The admin trail: every administrative action (users created, disabled, enabled, deleted, role
 * changes, API keys created or revoked, devices paired or revoked, standing grants revoked, Full
 * access granted or revoked, configuration reloaded): who, what, when and from where. Written in
 * the transaction of the action by `recordAdminEvent` only; a trigger refuses UPDATE and DELETE.
 */
export const auditLog = pgTable(
  "audit_log",
  {
    id: text("id").primaryKey(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
    /** Null when the CLI acted without a user (it runs with the data directory's authority). */
    actorUserId: text("actor_user_id"),
    action: text("action").notNull(),
    targetType: text("target_type").notNull(),
    targetId: text("target_id").notNull(),
    data: jsonb("data").$type<Record<string, unknown>>().notNull().default({}),
    /** Where the action came from: `console` (tRPC), `v1`, `cli` or `system` (the server itself). */
    channel: text("channel").notNull().default("console"),
    /** The CLI's OS user (channel `cli`). */
    osUser: text("os_user"),
    /** The client address of an action over HTTP (behind trusted proxies, the forwarded one). */
    clientIp: text("client_ip"),
  },
  (t) => [
    index("audit_log_target_idx").on(t.targetType, t.targetId, t.at),
    index("audit_log_at_idx").on(t.at),
    index("audit_log_actor_idx").on(t.actorUserId, t.at),
    index("audit_log_action_idx").on(t.action, t.at),
  ],
);
