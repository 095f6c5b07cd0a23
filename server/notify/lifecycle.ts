import type { Db } from "../../db/client";
import { peopleByIds } from "../../db/repositories/display-names";
import { finishedRuns, settledApprovalsWithAgent, settledQuestions } from "../../db/repositories/notify-subjects";
import type { TAnnouncement } from "../ports/bus";
import type { TLifecycleNotifier } from "../ports/lifecycle";
import type { TLifecycleEvent, TNotifyConfig } from "./config";
import { enqueueOnce } from "./outbox";
import { consoleLink, scrubText } from "./render";
import { enqueueSlackUpdates } from "./slack-updates";

/** The stored payload of a lifecycle delivery: the Standard Webhooks body without its id. */
export type TLifecyclePayload = { lifecycle: true; type: TLifecycleEvent; timestamp: string; data: Record<string, unknown> };

type TFact = { type: TLifecycleEvent; subjectKind: "approval" | "question" | "response"; subjectId: string; responseId: string | null; data: Record<string, unknown> };

/** Webhook channels subscribed to each lifecycle event. */
const subscribers = (config: TNotifyConfig, type: TLifecycleEvent): string[] =>
  Object.entries(config.channels).flatMap(([name, c]) => (c.type === "webhook" && c.events?.includes(type) ? [name] : []));

/** Whether any channel subscribes to a lifecycle event (otherwise nothing is looked at). */
export const wantsLifecycle = (config: TNotifyConfig): boolean => Object.values(config.channels).some((c) => c.type === "webhook" && (c.events?.length ?? 0) > 0);

const nameOf = async (tx: Db, ids: Array<string | null>): Promise<Map<string, { name: string; email: string }>> => {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  if (wanted.length === 0) return new Map();
  const rows = await peopleByIds(tx, wanted);
  return new Map(rows.map((r) => [r.id, { name: r.name, email: r.email }]));
};

/** The settled subjects a transaction touched, read inside it: only committed together with their change. */
async function factsOf(tx: Db, batch: readonly TAnnouncement[], publicUrl: string): Promise<TFact[]> {
  const approvalIds = new Set<string>();
  const questionIds = new Set<string>();
  const responseIds = new Set<string>();
  for (const a of batch) {
    if (a.k === "inbox" && a.change.kind === "approval" && a.change.id) approvalIds.add(a.change.id);
    if (a.k === "inbox" && a.change.kind === "question" && a.change.id) questionIds.add(a.change.id);
    if (a.k === "inbox" && a.change.kind === "response" && a.change.responseId) responseIds.add(a.change.responseId);
    if (a.k === "frames" && a.frames.some((f) => f.type === "response.completed")) responseIds.add(a.responseId);
  }
  const facts: TFact[] = [];
  if (approvalIds.size > 0) {
    const rows = await settledApprovalsWithAgent(tx, [...approvalIds]);
    const names = await nameOf(tx, rows.map((r) => r.a.decidedBy));
    for (const { a, agent } of rows) {
      facts.push({
        type: "approval.resolved",
        subjectKind: "approval",
        subjectId: a.id,
        responseId: a.responseId,
        data: {
          approvalId: a.id,
          responseId: a.responseId,
          sessionId: a.sessionId,
          agent,
          tool: a.toolName,
          action: a.action,
          risk: a.risk,
          status: a.status,
          decidedBy: a.decidedBy ? { userId: a.decidedBy, name: names.get(a.decidedBy)?.name ?? null, email: names.get(a.decidedBy)?.email ?? null } : null,
          via: a.decidedVia,
          decidedAt: a.decidedAt?.toISOString() ?? null,
          edited: a.originalBindingHash !== null,
          replied: a.replyMessage !== null,
          link: consoleLink(publicUrl, "approval", a.id),
        },
      });
    }
  }
  if (questionIds.size > 0) {
    const rows = await settledQuestions(tx, [...questionIds]);
    const names = await nameOf(tx, rows.map((q) => q.answeredBy));
    for (const q of rows) {
      // Never the answers: only that, how and by whom the question was settled.
      facts.push({
        type: "question.resolved",
        subjectKind: "question",
        subjectId: q.id,
        responseId: q.responseId,
        data: {
          questionId: q.id,
          responseId: q.responseId,
          sessionId: q.sessionId,
          status: q.status,
          resolvedBy: q.answeredBy ? { userId: q.answeredBy, name: names.get(q.answeredBy)?.name ?? null, email: names.get(q.answeredBy)?.email ?? null } : null,
          via: q.answeredVia,
          resolvedAt: q.resolvedAt?.toISOString() ?? null,
        },
      });
    }
  }
  if (responseIds.size > 0) {
    const rows = await finishedRuns(tx, [...responseIds]);
    for (const r of rows) {
      // No output text: a run's output may hold anything; receivers fetch it with their own key.
      const error = r.status === "failed" && r.error ? { code: r.error.code, message: scrubText(r.error.message).slice(0, 500) } : undefined;
      facts.push({
        type: r.status === "completed" ? "response.completed" : "response.failed",
        subjectKind: "response",
        subjectId: r.id,
        responseId: r.id,
        data: { responseId: r.id, sessionId: r.sessionId, agent: r.agent, status: r.status, usage: r.usage, completedAt: r.completedAt?.toISOString() ?? null, ...(error ? { error } : {}) },
      });
    }
  }
  return facts;
}

const EVENT_OF: Record<TLifecycleEvent, "resolved" | "completed" | "failed"> = {
  "approval.resolved": "resolved",
  "question.resolved": "resolved",
  "response.completed": "completed",
  "response.failed": "failed",
};

/**
 * Puts the lifecycle facts of a transaction into the outbox, inside that transaction: a fact is
 * enqueued exactly when its change commits (never lost on a crash, never without the change). The
 * plan row's primary key (subject, event) makes each fact enqueued once, whichever path or
 * replica settles it; the delivery id is the Standard Webhooks `webhook-id`.
 */
export async function enqueueLifecycle(tx: Db, config: TNotifyConfig, publicUrl: string, batch: readonly TAnnouncement[], now: Date): Promise<void> {
  if (!wantsLifecycle(config) || batch.length === 0) return;
  for (const fact of await factsOf(tx, batch, publicUrl)) {
    const channels = subscribers(config, fact.type);
    if (channels.length === 0) continue;
    const event = EVENT_OF[fact.type];
    const payload: TLifecyclePayload = { lifecycle: true, type: fact.type, timestamp: now.toISOString(), data: fact.data };
    const deliveries = channels.map((channel) => ({ channel, channelType: "webhook" as const, recipient: channel }));
    await enqueueOnce(tx, { kind: fact.subjectKind, id: fact.subjectId, responseId: fact.responseId }, event, deliveries, payload as unknown as Record<string, unknown>, now, "msg");
  }
}

/**
 * The notifications `transact` queues with each transaction (the TLifecycleNotifier port): its
 * lifecycle facts and the updates of Slack messages about the approvals it settled.
 */
export function lifecycleNotifier(config: TNotifyConfig, publicUrl: string): TLifecycleNotifier {
  return async (tx, batch, now) => {
    await enqueueLifecycle(tx, config, publicUrl, batch, now);
    await enqueueSlackUpdates(tx, config, batch, now);
  };
}

/** Whether an outbox row is a lifecycle fact (sent whatever its subject's state), not a "please decide". */
export const isLifecyclePayload = (payload: unknown): payload is TLifecyclePayload => Boolean(payload && typeof payload === "object" && (payload as { lifecycle?: unknown }).lifecycle === true);

/** The Standard Webhooks body: `{id, type, timestamp, data}`. */
export const lifecycleBody = (id: string, payload: TLifecyclePayload): Record<string, unknown> => ({ id, type: payload.type, timestamp: payload.timestamp, data: payload.data });
