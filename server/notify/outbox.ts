import type { Db } from "../../db/client";
import { insertNotifications, type TNewNotification } from "../../db/repositories/notifications";
import { claimNotificationPlan } from "../../db/repositories/outbox";
import { newId } from "../core/ids";

type TOutboxRow = TNewNotification;

/** What one enqueued fact is about. */
export type TOutboxSubject = { kind: TOutboxRow["subjectKind"]; id: string; responseId: string | null };

/** Where one copy goes. */
export type TOutboxDelivery = { channel: string; channelType: TOutboxRow["channelType"]; recipient: string; recipientUserId?: string | null };

/**
 * Enqueues one fact's deliveries exactly once, inside the caller's transaction: the plan row
 * (subject, event) is claimed first, and only the claim that wins inserts the deliveries, so two
 * replicas or two paths settling the same thing never send it twice. Returns how many were queued.
 */
export async function enqueueOnce(
  tx: Db,
  subject: TOutboxSubject,
  event: TOutboxRow["event"],
  deliveries: readonly TOutboxDelivery[],
  payload: Record<string, unknown>,
  now: Date,
  idPrefix: string,
): Promise<number> {
  const won = await claimNotificationPlan(tx, { subjectId: subject.id, event, subjectKind: subject.kind, deliveries: deliveries.length, createdAt: now });
  if (!won || deliveries.length === 0) return 0;
  await insertNotifications(
    tx,
    deliveries.map((d) => ({
      id: newId(idPrefix),
      subjectKind: subject.kind,
      subjectId: subject.id,
      responseId: subject.responseId,
      event,
      channel: d.channel,
      channelType: d.channelType,
      recipient: d.recipient,
      recipientUserId: d.recipientUserId ?? null,
      payload,
      nextAttemptAt: now,
      createdAt: now,
    })),
  );
  return deliveries.length;
}
