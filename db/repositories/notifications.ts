import { and, asc, desc, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";
import { type NOTIFICATION_STATUSES, notificationAttempts, notifications } from "../schema";
import { beforeCursor, decodeCursor, exactTimestamp, type TPage, toPage } from "./keyset";

/** An outbox row: one delivery of one fact to one channel and recipient. */
export type TNotificationRow = typeof notifications.$inferSelect;
export type TNewNotification = typeof notifications.$inferInsert;

/** Puts deliveries into the outbox (one statement, in the caller's transaction). */
export async function insertNotifications(tx: Db, rows: TNewNotification[]): Promise<void> {
  await tx.insert(notifications).values(rows);
}

/**
 * Claims up to `limit` pending deliveries due at `now` with one conditional update (`FOR UPDATE
 * SKIP LOCKED`): each claimed row counts its attempt and is not due again before `leaseUntil`.
 */
export async function claimDueNotifications(db: Db, now: Date, leaseUntil: Date, limit: number): Promise<TNotificationRow[]> {
  return db
    .update(notifications)
    .set({ attempts: sql`${notifications.attempts} + 1`, nextAttemptAt: leaseUntil })
    .where(
      sql`${notifications.id} in (select id from notifications where status = 'pending' and next_attempt_at <= ${now.toISOString()}::timestamptz order by next_attempt_at, id limit ${limit} for update skip locked)`,
    )
    .returning();
}

/** Records one attempt of a delivery in its log. */
export async function insertNotificationAttempt(
  tx: Db,
  attempt: { notificationId: string; attempt: number; ok: boolean; statusCode: number | null; error: string | null; durationMs: number; at: Date },
): Promise<void> {
  await tx.insert(notificationAttempts).values({
    notificationId: attempt.notificationId,
    attempt: attempt.attempt,
    ok: attempt.ok,
    statusCode: attempt.statusCode,
    error: attempt.error,
    durationMs: attempt.durationMs,
    at: attempt.at,
  });
}

/**
 * Writes the outcome of a delivery's attempt number `attempts`: only while the row is still
 * pending with that attempt count (only the claim that counted this attempt records it).
 */
export async function recordNotificationOutcome(
  tx: Db,
  claim: { id: string; attempts: number },
  outcome: { status: TNotificationRow["status"]; lastError: string | null; lastStatusCode: number | null; deliveredAt: Date | null; nextAttemptAt: Date },
): Promise<void> {
  await tx
    .update(notifications)
    .set({ status: outcome.status, lastError: outcome.lastError, lastStatusCode: outcome.lastStatusCode, deliveredAt: outcome.deliveredAt, nextAttemptAt: outcome.nextAttemptAt })
    .where(and(eq(notifications.id, claim.id), eq(notifications.attempts, claim.attempts), eq(notifications.status, "pending")));
}

/** The stored payload of a delivery, or null when the row is gone. */
export async function notificationPayload(db: Db, id: string): Promise<Record<string, unknown> | null> {
  const [post] = await db.select({ payload: notifications.payload }).from(notifications).where(eq(notifications.id, id));
  return post ? post.payload : null;
}

export type TNotificationFilter = { status?: (typeof NOTIFICATION_STATUSES)[number]; channel?: string; subjectId?: string; cursor?: string | null; limit: number };

export type TNotificationRowView = {
  id: string;
  subjectKind: string;
  subjectId: string;
  responseId: string | null;
  event: string;
  channel: string;
  channelType: string;
  recipient: string;
  status: string;
  attempts: number;
  lastError: string | null;
  lastStatusCode: number | null;
  nextAttemptAt: string;
  deliveredAt: string | null;
  createdAt: string;
  cursorAt: string;
};

/** The delivery log, newest first (keyset on created_at, id), by status, channel or subject. Payloads are not listed. */
export async function listNotificationsPage(db: Db, filter: TNotificationFilter): Promise<TPage<TNotificationRowView>> {
  const where: (SQL | undefined)[] = [
    filter.status ? eq(notifications.status, filter.status) : undefined,
    filter.channel ? eq(notifications.channel, filter.channel) : undefined,
    filter.subjectId ? eq(notifications.subjectId, filter.subjectId) : undefined,
  ];
  const cursor = decodeCursor(filter.cursor);
  if (cursor) where.push(beforeCursor(notifications.createdAt, notifications.id, cursor));
  const rows = await db
    .select({
      id: notifications.id,
      subjectKind: notifications.subjectKind,
      subjectId: notifications.subjectId,
      responseId: notifications.responseId,
      event: notifications.event,
      channel: notifications.channel,
      channelType: notifications.channelType,
      recipient: notifications.recipient,
      status: notifications.status,
      attempts: notifications.attempts,
      lastError: notifications.lastError,
      lastStatusCode: notifications.lastStatusCode,
      nextAttemptAt: notifications.nextAttemptAt,
      deliveredAt: notifications.deliveredAt,
      createdAt: notifications.createdAt,
      cursorAt: exactTimestamp(notifications.createdAt),
    })
    .from(notifications)
    .where(and(...where))
    .orderBy(desc(notifications.createdAt), desc(notifications.id))
    .limit(filter.limit + 1);
  return toPage(
    rows.map((r) => ({ ...r, nextAttemptAt: r.nextAttemptAt.toISOString(), deliveredAt: r.deliveredAt?.toISOString() ?? null, createdAt: r.createdAt.toISOString() })),
    filter.limit,
  );
}

export type TAttemptView = { attempt: number; ok: boolean; statusCode: number | null; error: string | null; durationMs: number; at: string };

/** Every attempt of one notification, in order. */
export async function listNotificationAttempts(db: Db, notificationId: string): Promise<TAttemptView[]> {
  const rows = await db
    .select({ attempt: notificationAttempts.attempt, ok: notificationAttempts.ok, statusCode: notificationAttempts.statusCode, error: notificationAttempts.error, durationMs: notificationAttempts.durationMs, at: notificationAttempts.at })
    .from(notificationAttempts)
    .where(eq(notificationAttempts.notificationId, notificationId))
    .orderBy(asc(notificationAttempts.attempt), asc(notificationAttempts.id));
  return rows.map((r) => ({ ...r, at: r.at.toISOString() }));
}

/** The channel names that appear in the log, for the filter. */
export async function listNotificationChannels(db: Db): Promise<string[]> {
  const rows = await db.selectDistinct({ channel: notifications.channel }).from(notifications).orderBy(asc(notifications.channel));
  return rows.map((r) => r.channel);
}
