import { sql } from "drizzle-orm";
import { index, integer, pgEnum, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { transportEnum } from "./responses";

export const STEERING_STATUSES = ["queued", "committed", "rejected", "cancelled"] as const;
export const steeringStatusEnum = pgEnum("steering_status", STEERING_STATUSES);
export const authorityKindEnum = pgEnum("authority_kind", ["run", "source-bound"]);

/**
 * Messages steered into a running response. Queued rows are claimed by the attempt at its next
 * model turn (`committedTurn`); a rejected row stays rejected even if its source looks current later.
 */
export const steeringMessages = pgTable(
  "steering_messages",
  {
    id: text("id").primaryKey(),
    responseId: text("response_id").notNull(),
    sessionId: text("session_id").notNull(),
    userId: text("user_id").notNull(),
    text: text("text").notNull(),
    authorityKind: authorityKindEnum("authority_kind").notNull(),
    via: transportEnum("via").notNull(),
    status: steeringStatusEnum("status").notNull().default("queued"),
    reason: text("reason"),
    committedTurn: integer("committed_turn"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    settledAt: timestamp("settled_at", { withTimezone: true }),
  },
  (t) => [
    index("steering_response_idx").on(t.responseId, t.createdAt),
    // Console home: queued messages waiting for their run's next turn.
    index("steering_queued_idx").on(t.createdAt).where(sql`status = 'queued'`),
  ],
);
