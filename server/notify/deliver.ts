import type { Db } from "../../db/client";
import { claimDueNotifications, insertNotificationAttempt, recordNotificationOutcome, type TNotificationRow } from "../../db/repositories/notifications";
import { approvalStateForDelivery, questionStateForDelivery } from "../../db/repositories/notify-subjects";
import { actorOf } from "../auth/users";
import type { TAgentPolicy } from "../core/agent-policy";
import { canDecide, type TActor } from "../core/actor";
import { decisionRefusal } from "../core/separation-of-duties";
import type { TNotifyDeps } from "./deps";
import { callSlackApi, createMailer, sendSlack, sendWebhook, type TMailer, type TSendResult } from "./channels";
import type { TNotifyConfig } from "./config";
import { isLifecyclePayload, lifecycleBody, type TLifecyclePayload } from "./lifecycle";
import { mintLinkToken, voidLinkTokens } from "./links";
import { consoleLink, emailMessage, type TNotificationPayload, webhookBody } from "./render";
import { backoffMs } from "./route";
import { slackMessage } from "./slack-render";
import { isSlackUpdatePayload, recordSlackMessage, sendSlackUpdate } from "./slack-updates";

/** How many due deliveries one pass claims (sent concurrently). */
const DELIVERY_BATCH = 10;

export type TDeliveryContext = { config: TNotifyConfig; publicUrl: string; mailer: TMailer | null };

export function createDeliveryContext(config: TNotifyConfig, publicUrl: string): TDeliveryContext {
  return { config, publicUrl, mailer: createMailer(config) };
}

/**
 * Claims due deliveries with one conditional update (`FOR UPDATE SKIP LOCKED`): the claim counts
 * the attempt and pushes `next_attempt_at` past the send timeout, so no other replica takes the
 * same row while it is being sent, and a replica that dies mid-send leaves it to be retried.
 */
async function claimDue(deps: TNotifyDeps, ctx: TDeliveryContext): Promise<TNotificationRow[]> {
  const now = deps.now();
  const leaseUntil = new Date(now.getTime() + ctx.config.timeoutMs * 2 + 5000);
  return claimDueNotifications(deps.db, now, leaseUntil, DELIVERY_BATCH);
}

type TSubjectState = { status: string; userId: string; expiresAt: Date; approval?: { requiredApprovals: number; agent: string; agentPolicy: TAgentPolicy | null } };

/** The subject's state now: a settled approval or question is not announced any more. */
async function subjectState(deps: TNotifyDeps, row: TNotificationRow): Promise<TSubjectState | null> {
  if (row.subjectKind === "approval") {
    const a = await approvalStateForDelivery(deps.db, row.subjectId);
    return a ? { status: a.status, userId: a.userId, expiresAt: a.expiresAt, approval: { requiredApprovals: a.requiredApprovals, agent: a.agent, agentPolicy: a.agentPolicy } } : null;
  }
  return questionStateForDelivery(deps.db, row.subjectId);
}

/** Whether the link would work for this recipient: an approval by the separation-of-duties rule, a question by role. */
function mayAct(deps: TNotifyDeps, actor: TActor, owner: TSubjectState): boolean {
  if (owner.approval) return decisionRefusal(actor, { userId: owner.userId, requiredApprovals: owner.approval.requiredApprovals }, deps.agents.decisionPolicyOf(owner.approval.agent, owner.approval.agentPolicy)) === null;
  return canDecide(actor, owner.userId);
}

/** A lifecycle fact: sent to its webhook channel whatever the subject's state is now. */
function sendLifecycle(deps: TNotifyDeps, ctx: TDeliveryContext, row: TNotificationRow, payload: TLifecyclePayload): Promise<TSendResult> {
  const channel = ctx.config.channels[row.channel];
  if (channel?.type !== "webhook") return Promise.resolve({ ok: false, statusCode: null, error: `the channel "${row.channel}" is no longer configured` });
  const body = JSON.stringify(lifecycleBody(row.id, payload));
  return sendWebhook(channel.url, ctx.config.webhookSecrets[row.channel] ?? "", body, { deliveryId: row.id, event: payload.type, now: deps.now(), timeoutMs: ctx.config.timeoutMs });
}

/**
 * A Slack message: to the incoming webhook, or with `chat.postMessage` to the channel id, whose
 * message about an approval is then recorded to be updated when the approval is settled.
 */
async function sendSlackMessage(deps: TNotifyDeps, ctx: TDeliveryContext, row: TNotificationRow, payload: TNotificationPayload): Promise<TSendResult> {
  const message = slackMessage(payload, { buttons: row.channel in ctx.config.slackApps });
  const bot = ctx.config.slackBots[row.channel];
  const channel = ctx.config.channels[row.channel];
  if (!bot) return channel?.type === "slack" && channel.url ? sendSlack(channel.url, message, ctx.config.timeoutMs) : { ok: false, statusCode: null, error: `the channel "${row.channel}" has no url` };
  const posted = await callSlackApi(bot, "chat.postMessage", { channel: bot.channel, ...message }, ctx.config.timeoutMs);
  const ts = posted.body?.ts;
  if (posted.ok && row.subjectKind === "approval" && typeof ts === "string") {
    const slackChannel = typeof posted.body?.channel === "string" ? posted.body.channel : bot.channel;
    // The message is out: a failure to record it only means it will not be updated (logged), never a second post.
    await recordSlackMessage(deps.db, { postId: row.id, approvalId: row.subjectId, channel: row.channel, slackChannel, ts }, deps.now()).catch((error: unknown) =>
      deps.log.warn({ err: error, notificationId: row.id }, "a Slack message was posted but could not be recorded; it will not be updated"),
    );
  }
  return { ok: posted.ok, statusCode: posted.statusCode, error: posted.error };
}

async function send(deps: TNotifyDeps, ctx: TDeliveryContext, row: TNotificationRow, owner: TSubjectState): Promise<TSendResult> {
  const channel = ctx.config.channels[row.channel];
  const payload = row.payload as unknown as TNotificationPayload;
  if (!channel || channel.type !== row.channelType) return { ok: false, statusCode: null, error: `the channel "${row.channel}" is no longer configured` };
  if (channel.type === "webhook") {
    const body = JSON.stringify(webhookBody(row.id, payload));
    return sendWebhook(channel.url, ctx.config.webhookSecrets[row.channel] ?? "", body, { deliveryId: row.id, event: `${row.subjectKind}.${row.event}`, now: deps.now(), timeoutMs: ctx.config.timeoutMs });
  }
  if (channel.type === "slack") return sendSlackMessage(deps, ctx, row, payload);
  if (!ctx.mailer) return { ok: false, statusCode: null, error: "no SMTP server is configured" };
  const subjectKind = row.subjectKind;
  if (subjectKind === "response") return { ok: false, statusCode: null, error: "runs are announced by lifecycle webhooks only" };
  // A person who may act gets a single-use link; anyone else (e.g. the requester of an approval
  // it may not decide itself) the console page behind the login.
  const actor = row.recipientUserId ? await actorOf(deps.db, row.recipientUserId) : null;
  let link = { url: consoleLink(ctx.publicUrl, subjectKind, row.subjectId), singleUse: false, expiresAt: undefined as Date | undefined };
  if (actor && mayAct(deps, actor, owner)) {
    const minted = await mintLinkToken(deps.db, {
      subjectKind,
      subjectId: row.subjectId,
      userId: actor.userId,
      notificationId: row.id,
      ttlMs: ctx.config.linkTtlMs,
      subjectExpiresAt: owner.expiresAt,
      now: deps.now(),
    });
    link = { url: `${ctx.publicUrl.replace(/\/+$/, "")}/l/${minted.token}`, singleUse: true, expiresAt: minted.expiresAt };
  }
  const result = await ctx.mailer.send({ to: row.recipient, ...emailMessage(payload, link) });
  // A failed send leaves no usable link behind (a retry mints a fresh one).
  if (!result.ok) await voidLinkTokens(deps.db, row.id, deps.now());
  return result;
}

/** Sends one claimed delivery and records the attempt; the row's next state depends on the outcome. */
async function deliverOne(deps: TNotifyDeps, ctx: TDeliveryContext, row: TNotificationRow): Promise<void> {
  const started = Date.now();
  const lifecycle = isLifecyclePayload(row.payload) ? row.payload : null;
  const update = isSlackUpdatePayload(row.payload) ? row.payload : null;
  const state = lifecycle || update ? null : await subjectState(deps, row);
  let result: TSendResult;
  let skipped = false;
  if (lifecycle) {
    result = await sendLifecycle(deps, ctx, row, lifecycle).catch((error: unknown) => ({ ok: false, statusCode: null, error: error instanceof Error ? error.message : String(error) }));
  } else if (update) {
    // An outcome: the message is updated whatever the approval's state is now.
    result = await sendSlackUpdate(deps.db, ctx.config, row.channel, update).catch((error: unknown) => ({ ok: false, statusCode: null, error: error instanceof Error ? error.message : String(error) }));
  } else if (state?.status !== "pending" || state.expiresAt.getTime() <= deps.now().getTime()) {
    skipped = true;
    const what = row.subjectKind === "approval" ? "approval" : "question";
    result = { ok: false, statusCode: null, error: `skipped: the ${what} is ${state ? (state.status === "pending" ? "expired" : `already ${state.status}`) : "gone"}` };
  } else {
    result = await send(deps, ctx, row, state).catch((error: unknown) => ({ ok: false, statusCode: null, error: error instanceof Error ? error.message : String(error) }));
  }
  const durationMs = Date.now() - started;
  // A skipped delivery sent nothing: it is no attempt of the channel.
  if (!skipped) deps.observe.metrics.notification({ channel: row.channel, ok: result.ok });
  const now = deps.now();
  const final = result.ok || skipped || row.attempts >= ctx.config.retry.maxAttempts;
  await deps.db.transaction(async (transaction) => {
    const tx = transaction as unknown as Db;
    await insertNotificationAttempt(tx, { notificationId: row.id, attempt: row.attempts, ok: result.ok, statusCode: result.statusCode, error: result.error, durationMs, at: now });
    // Only the claim that counted this attempt records it.
    await recordNotificationOutcome(
      tx,
      { id: row.id, attempts: row.attempts },
      {
        status: result.ok ? "delivered" : final ? "failed" : "pending",
        lastError: result.error,
        lastStatusCode: result.statusCode,
        deliveredAt: result.ok ? now : null,
        nextAttemptAt: final ? now : new Date(now.getTime() + backoffMs(ctx.config.retry, row.attempts)),
      },
    );
  });
  const log = { notificationId: row.id, channel: row.channel, attempt: row.attempts, statusCode: result.statusCode, error: result.error };
  if (result.ok) deps.log.debug(log, "notification delivered");
  else deps.log.warn(log, final ? "notification not delivered" : "notification delivery failed; will retry");
}

/** Claims and sends what is due; returns how many deliveries were attempted. */
export async function deliverDue(deps: TNotifyDeps, ctx: TDeliveryContext): Promise<number> {
  const claimed = await claimDue(deps, ctx);
  await Promise.all(claimed.map((row) => deliverOne(deps, ctx, row).catch((error: unknown) => deps.log.error({ err: error, notificationId: row.id }, "notification delivery crashed"))));
  return claimed.length;
}
