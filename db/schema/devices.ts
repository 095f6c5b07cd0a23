import { sql } from "drizzle-orm";
import { index, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { users } from "./auth";

export const DEVICE_STATUSES = ["pending", "paired", "revoked"] as const;
export type TDeviceStatus = (typeof DEVICE_STATUSES)[number];
export const deviceStatusEnum = pgEnum("device_status", DEVICE_STATUSES);

/** What a device declared about its own local policy when it last connected (display only; the device enforces it). */
export type TDeclaredPolicy = { consent: "allow" | "deny"; denyPatterns: number };

/**
 * A paired device: created `pending` with a one-time pairing token (SHA-256 hash only, 10 minutes,
 * single use), `paired` once a device process used the token and received its credential (also
 * stored as a hash only), `revoked` by an admin. At most one non-revoked device per name.
 */
export const devices = pgTable(
  "devices",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    status: deviceStatusEnum("status").notNull().default("pending"),
    createdBy: text("created_by")
      .notNull()
      .references(() => users.id),
    pairingTokenHash: text("pairing_token_hash").notNull().unique(),
    pairingExpiresAt: timestamp("pairing_expires_at", { withTimezone: true }).notNull(),
    pairedAt: timestamp("paired_at", { withTimezone: true }),
    credentialHash: text("credential_hash").unique(),
    /** The node command names the device declared in its allowlist at its last connection. */
    commands: jsonb("commands").$type<string[]>().notNull().default([]),
    policy: jsonb("policy").$type<TDeclaredPolicy | null>(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    revokedBy: text("revoked_by"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("devices_active_name_uq").on(t.name).where(sql`status <> 'revoked'`), index("devices_created_idx").on(t.createdAt)],
);
