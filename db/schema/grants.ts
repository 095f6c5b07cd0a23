import { sql } from "drizzle-orm";
import { index, integer, jsonb, pgEnum, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { transportEnum } from "./responses";

export const GRANT_SCOPES = ["session", "days"] as const;
export type TGrantScope = (typeof GRANT_SCOPES)[number];
export const grantScopeEnum = pgEnum("grant_scope", GRANT_SCOPES);

/**
 * A standing grant: one exact operation (`operationHash` over agent, action, arguments and working
 * directory) that a user's runs of one agent may perform without a prompt, for one session or until
 * `expiresAt`. Revocation sets `revokedAt`; a use is a conditional update, so a revocation that
 * committed first always wins.
 */
export const grants = pgTable(
  "grants",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull(),
    agent: text("agent").notNull(),
    toolName: text("tool_name").notNull(),
    action: text("action").notNull(),
    arguments: jsonb("arguments").$type<unknown>().notNull(),
    cwd: text("cwd"),
    operationHash: text("operation_hash").notNull(),
    scope: grantScopeEnum("scope").notNull(),
    /** Set for `session` grants: the only session they apply to. */
    sessionId: text("session_id"),
    /** Set for `days` grants. */
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    approvalId: text("approval_id").notNull(),
    createdBy: text("created_by").notNull(),
    createdVia: transportEnum("created_via").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    uses: integer("uses").notNull().default(0),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    revokedBy: text("revoked_by"),
  },
  (t) => [
    index("grants_active_idx").on(t.userId, t.agent, t.operationHash).where(sql`revoked_at is null`),
    index("grants_created_idx").on(t.createdAt, t.id),
  ],
);
