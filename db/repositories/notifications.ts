import { and, asc, desc, eq, type SQL } from "drizzle-orm";
import type { Db } from "../client";
import { type NOTIFICATION_STATUSES, notificationAttempts, notifications } from "../schema";
import { beforeCursor, decodeCursor, exactTimestamp, type TPage, toPage } from "./keyset";

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
