import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgEnum, pgTable, primaryKey, serial, text, timestamp } from "drizzle-orm/pg-core";
import { NOTIFICATION_STATUSES } from "../../server/core/vocabulary";

export const NOTIFY_SUBJECTS = ["approval", "question", "response"] as const;
/** "Please decide" events (requested, reminder, escalation) and lifecycle facts (resolved, completed, failed). */
export const NOTIFY_EVENTS = ["requested", "reminder", "escalation", "resolved", "completed", "failed"] as const;
export const NOTIFY_CHANNEL_TYPES = ["webhook", "slack", "email"] as const;
export { NOTIFICATION_STATUSES };
export const notifySubjectEnum = pgEnum("notify_subject", NOTIFY_SUBJECTS);
export const notifyEventEnum = pgEnum("notify_event", NOTIFY_EVENTS);
export const notifyChannelTypeEnum = pgEnum("notify_channel_type", NOTIFY_CHANNEL_TYPES);
export const notificationStatusEnum = pgEnum("notification_status", NOTIFICATION_STATUSES);

/**
 * One row per (subject, event) that has been routed: whoever inserts it first (any replica) plans
 * the deliveries, so a request, reminder or escalation is planned exactly once.
 */
export const notificationPlans = pgTable(
  "notification_plans",
  {
    subjectId: text("subject_id").notNull(),
    event: notifyEventEnum("event").notNull(),
    subjectKind: notifySubjectEnum("subject_kind").notNull(),
    deliveries: integer("deliveries").notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.subjectId, t.event] })],
);

/** The outbox: one delivery to one channel (and, for email, one recipient), retried with backoff. */
export const notifications = pgTable(
  "notifications",
  {
    id: text("id").primaryKey(),
    subjectKind: notifySubjectEnum("subject_kind").notNull(),
    subjectId: text("subject_id").notNull(),
    responseId: text("response_id"),
    event: notifyEventEnum("event").notNull(),
    channel: text("channel").notNull(),
    channelType: notifyChannelTypeEnum("channel_type").notNull(),
    /** Email: the recipient's address; webhook/Slack: the channel name. */
    recipient: text("recipient").notNull(),
    /** The recipient user (email), for single-use link tokens. */
    recipientUserId: text("recipient_user_id"),
    /** What is sent, already free of secrets and private input (links are added at send time). */
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    status: notificationStatusEnum("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    lastError: text("last_error"),
    lastStatusCode: integer("last_status_code"),
    deliveredAt: timestamp("delivered_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("notifications_due_idx").on(t.nextAttemptAt).where(sql`status = 'pending'`),
    index("notifications_subject_idx").on(t.subjectId),
    index("notifications_created_idx").on(t.createdAt, t.id),
  ],
);

/** The delivery log: every attempt of every notification, with its outcome. */
export const notificationAttempts = pgTable(
  "notification_attempts",
  {
    id: serial("id").primaryKey(),
    notificationId: text("notification_id").notNull(),
    attempt: integer("attempt").notNull(),
    ok: boolean("ok").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("notification_attempts_notification_idx").on(t.notificationId, t.attempt)],
);

/**
 * A link in a notification: short-lived, single-use, bound to one approval or question and one
 * recipient. Only the SHA-256 hash of the token is stored.
 */
export const linkTokens = pgTable(
  "link_tokens",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull().unique(),
    subjectKind: notifySubjectEnum("subject_kind").notNull(),
    subjectId: text("subject_id").notNull(),
    userId: text("user_id").notNull(),
    notificationId: text("notification_id"),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("link_tokens_subject_idx").on(t.subjectId)],
);

/**
 * A Slack message posted with `chat.postMessage` about an approval (a channel with a channel id):
 * where it is (`slack_channel`, `ts`), so it can be updated with `chat.update` once the approval
 * is settled. `update_id` is the outbox row of that update: set once, by whichever comes last of
 * the post being recorded and the approval being settled, so each message is updated exactly once.
 */
export const slackMessages = pgTable(
  "slack_messages",
  {
    /** The outbox row that posted it. */
    notificationId: text("notification_id").primaryKey(),
    subjectId: text("subject_id").notNull(),
    /** The notification config's channel name. */
    channel: text("channel").notNull(),
    slackChannel: text("slack_channel").notNull(),
    ts: text("ts").notNull(),
    updateId: text("update_id"),
    postedAt: timestamp("posted_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("slack_messages_subject_idx").on(t.subjectId)],
);
