import { customType, index, integer, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { users } from "./auth";

/** Raw bytes: `bytea` on PostgreSQL and PGlite alike (both drivers hand back a Uint8Array/Buffer). */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => "bytea",
  fromDriver: (value) => (value instanceof Uint8Array ? value : new Uint8Array(value as ArrayLike<number>)),
});

/**
 * The managed media store: attachment bytes, content-addressed per owner (one row per owner and
 * sha256, however often the same file is attached or produced). Trajectories and envelopes carry
 * only the facts (id, name, type, size, sha256).
 */
export const media = pgTable(
  "media",
  {
    id: text("id").primaryKey(),
    ownerId: text("owner_id")
      .notNull()
      .references(() => users.id),
    sha256: text("sha256").notNull(),
    mediaType: text("media_type").notNull(),
    size: integer("size").notNull(),
    data: bytea("data").notNull(),
    /** When the bytes were stored, or last stored or attached again: media retention counts from it. */
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("media_owner_sha_uq").on(t.ownerId, t.sha256, t.mediaType), index("media_owner_idx").on(t.ownerId, t.createdAt)],
);
