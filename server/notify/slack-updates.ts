import type { Db } from "../../db/client";
import { insertNotifications, notificationPayload } from "../../db/repositories/notifications";
import {
  approvalStatusForShare,
  claimSlackMessageUpdate,
  settledApproval,
  type TSettledApproval,
  type TSlackMessageRow,
  unclaimedMessagesOfSettledApprovals,
  upsertSlackMessage,
} from "../../db/repositories/slack-messages";
import { newId } from "../core/ids";
import { personLabel } from "../core/person";
import type { TAnnouncement } from "../ports/bus";
import { callSlackApi, type TSendResult } from "./channels";
import type { TNotifyConfig } from "./config";
import { scrubText, type TNotificationPayload } from "./render";
import { slackMessage, type TSlackOutcome } from "./slack-render";

/**
 * Slack messages posted with `chat.postMessage` are updated with `chat.update` once their approval
 * is settled, whichever path settled it (console, /v1, WebSocket, Slack, a link, the expiry sweep,
 * a run's cancellation). The update is an outbox row (retried with backoff, logged like any
 * delivery), put there by whichever comes last:
 *
 * - the transaction that settles the approval (`transact` calls `enqueueSlackUpdates`): it finds
 *   the messages already recorded;
 * - the recording of a message posted meanwhile (`recordSlackMessage`): it reads the approval
 *   under a share lock, so it either waits for a settling transaction to commit and sees it
 *   settled, or makes that transaction wait until the message is recorded (and then found).
 *
 * `slack_messages.update_id` is claimed with one conditional update: each message is updated once.
 */

/** The stored payload of an update: which message, and how its approval ended. */
export type TSlackUpdatePayload = { slackUpdate: true; postId: string; slackChannel: string; ts: string; outcome: TSlackOutcome };

export const isSlackUpdatePayload = (payload: unknown): payload is TSlackUpdatePayload =>
  Boolean(payload && typeof payload === "object" && (payload as { slackUpdate?: unknown }).slackUpdate === true);

/** Whether any Slack channel posts with the Web API (otherwise nothing is looked at). */
export const wantsSlackUpdates = (config: TNotifyConfig): boolean => Object.keys(config.slackBots).length > 0;

/** A reply shown in the channel is scrubbed like any other text and bounded (Slack's section is 3,000 characters). */
const REPLY_SHOWN_MAX = 2000;

function outcomeOf(a: TSettledApproval): TSlackOutcome {
  const status = a.status as TSlackOutcome["status"];
  const person = a.name || a.email ? personLabel({ name: a.name, email: a.email }) : null;
  return {
    status,
    by: person,
    via: a.decidedVia,
    at: a.decidedAt?.toISOString() ?? null,
    reply: status === "denied" && a.replyMessage !== null ? scrubText(a.replyMessage).slice(0, REPLY_SHOWN_MAX) : null,
  };
}

/** Claims a message's update (once) and puts it in the outbox, inside the caller's transaction. */
async function claimUpdate(tx: Db, message: TSlackMessageRow, approval: TSettledApproval, now: Date): Promise<void> {
  const id = newId("notif");
  if (!(await claimSlackMessageUpdate(tx, message.notificationId, id))) return;
  const payload: TSlackUpdatePayload = { slackUpdate: true, postId: message.notificationId, slackChannel: message.slackChannel, ts: message.ts, outcome: outcomeOf(approval) };
  await insertNotifications(tx, [
    {
      id,
      subjectKind: "approval",
      subjectId: approval.id,
      responseId: approval.responseId,
      event: "resolved",
      channel: message.channel,
      channelType: "slack",
      recipient: message.channel,
      payload: payload as unknown as Record<string, unknown>,
      nextAttemptAt: now,
      createdAt: now,
    },
  ]);
}

/** In the transaction that settles approvals: the updates of their messages already posted. */
export async function enqueueSlackUpdates(tx: Db, config: TNotifyConfig, batch: readonly TAnnouncement[], now: Date): Promise<void> {
  if (!wantsSlackUpdates(config)) return;
  const ids = [...new Set(batch.flatMap((a) => (a.k === "inbox" && a.change.kind === "approval" && a.change.id ? [a.change.id] : [])))];
  if (ids.length === 0) return;
  const rows = await unclaimedMessagesOfSettledApprovals(tx, ids);
  for (const { message, approval } of rows) await claimUpdate(tx, message, approval, now);
}

/**
 * Records a message just posted about an approval; when the approval is already settled (read
 * under a share lock, see above), its update goes into the outbox in the same transaction.
 */
export async function recordSlackMessage(db: Db, input: { postId: string; approvalId: string; channel: string; slackChannel: string; ts: string }, now: Date): Promise<void> {
  await db.transaction(async (raw) => {
    const tx = raw as unknown as Db;
    const message = await upsertSlackMessage(tx, { notificationId: input.postId, subjectId: input.approvalId, channel: input.channel, slackChannel: input.slackChannel, ts: input.ts, postedAt: now });
    const status = await approvalStatusForShare(tx, input.approvalId);
    if (!message || status === null || status === "pending") return;
    const approval = await settledApproval(tx, input.approvalId);
    if (approval) await claimUpdate(tx, message, approval, now);
  });
}

/**
 * Sends one update: the message as it was posted (its stored payload), without buttons and with
 * the outcome on top, through `chat.update`.
 */
export async function sendSlackUpdate(db: Db, config: TNotifyConfig, channel: string, payload: TSlackUpdatePayload): Promise<TSendResult> {
  const bot = config.slackBots[channel];
  if (!bot) return { ok: false, statusCode: null, error: `the channel "${channel}" no longer posts with a bot token, so its message cannot be updated` };
  const posted = await notificationPayload(db, payload.postId);
  if (!posted) return { ok: false, statusCode: null, error: `the posted notification ${payload.postId} is gone` };
  const message = slackMessage(posted as unknown as TNotificationPayload, { outcome: payload.outcome });
  const { ok, statusCode, error } = await callSlackApi(bot, "chat.update", { channel: payload.slackChannel, ts: payload.ts, ...message }, config.timeoutMs);
  return { ok, statusCode, error };
}
