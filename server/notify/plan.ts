import { pendingApprovalsToAnnounce, pendingQuestionsToAnnounce } from "../../db/repositories/notify-subjects";
import { plannedEvents } from "../../db/repositories/outbox";
import { teamMemberEmails, usersByEmails } from "../../db/repositories/users";
import type { TRisk } from "../core/vocabulary";
import type { TNotifyDeps } from "./deps";
import type { TNotifyConfig } from "./config";
import { enqueueOnce } from "./outbox";
import { approvalView, consoleLink, questionView, type TNotificationPayload, type TSubjectView } from "./render";
import { dueEvents, type TDelivery, type TNotifyEvent, type TRoutedSubject, teamsNamed } from "./route";

const isDecideEvent = (event: string): event is TNotifyEvent => event === "requested" || event === "reminder" || event === "escalation";

/** How many pending subjects one planning pass looks at (oldest first). */
const PLAN_BATCH = 500;

type TPendingSubject = TRoutedSubject & { id: string; responseId: string | null; view: TSubjectView; bindingHash?: string };

async function pendingSubjects(deps: TNotifyDeps): Promise<TPendingSubject[]> {
  // Items not announced yet come first, so a backlog beyond one batch cannot starve new ones.
  const a = await pendingApprovalsToAnnounce(deps.db, PLAN_BATCH);
  const q = await pendingQuestionsToAnnounce(deps.db, PLAN_BATCH);
  return [
    ...a.map(({ approval, agent, requesterName, requesterEmail }) => ({
      kind: "approval" as const,
      id: approval.id,
      responseId: approval.responseId,
      agent,
      risk: approval.risk as TRisk,
      createdAt: approval.createdAt,
      expiresAt: approval.expiresAt,
      view: approvalView({ ...approval, agent, requester: requesterName || requesterEmail ? { name: requesterName, email: requesterEmail } : null }),
      bindingHash: approval.bindingHash,
    })),
    ...q.map(({ question, agent }) => ({
      kind: "question" as const,
      id: question.id,
      responseId: question.responseId,
      agent: agent ?? null,
      risk: null,
      createdAt: question.createdAt,
      expiresAt: question.expiresAt,
      view: questionView({ ...question, agent: agent ?? null }),
    })),
  ];
}

/**
 * Plans what is due: for each pending approval or question, every event (request, reminder,
 * escalation) whose time has come and that has no plan row yet. The plan row and its outbox rows
 * are one transaction, and the plan row's primary key makes the first replica to insert it win.
 */
export async function planDue(deps: TNotifyDeps, config: TNotifyConfig, publicUrl: string): Promise<number> {
  const subjects = await pendingSubjects(deps);
  if (subjects.length === 0) return 0;
  const plans = await plannedEvents(deps.db, subjects.map((s) => s.id));
  const planned = new Map<string, Set<TNotifyEvent>>();
  for (const p of plans) if (isDecideEvent(p.event)) planned.set(p.subjectId, (planned.get(p.subjectId) ?? new Set()).add(p.event));
  const now = deps.now();
  // The members of the teams the rules name, as they are now (single sign-on writes them).
  const named = teamsNamed(config);
  const teams = named.length > 0 ? await teamMemberEmails(deps.db, named) : new Map<string, string[]>();
  let written = 0;
  for (const subject of subjects) {
    for (const { event, deliveries } of dueEvents(config, subject, now, planned.get(subject.id) ?? new Set(), teams)) {
      written += await planEvent(deps, subject, event, await withRecipients(deps, deliveries), publicUrl);
    }
  }
  return written;
}

type TAddressed = TDelivery & { userId: string | null };

/** Email deliveries get their user; addresses that belong to no user are logged and dropped. */
async function withRecipients(deps: TNotifyDeps, deliveries: TDelivery[]): Promise<TAddressed[]> {
  const emails = [...new Set(deliveries.filter((d) => d.channelType === "email").map((d) => d.recipient))];
  const known = emails.length ? await usersByEmails(deps.db, emails) : [];
  const byEmail = new Map(known.map((u) => [u.email.toLowerCase(), u.id]));
  const out: TAddressed[] = [];
  for (const d of deliveries) {
    if (d.channelType !== "email") {
      out.push({ ...d, userId: null });
      continue;
    }
    const userId = byEmail.get(d.recipient);
    if (userId) out.push({ ...d, userId });
    else deps.log.warn({ channel: d.channel, recipient: d.recipient }, "notification recipient is not a user; skipped");
  }
  return out;
}

async function planEvent(deps: TNotifyDeps, subject: TPendingSubject, event: TNotifyEvent, deliveries: TAddressed[], publicUrl: string): Promise<number> {
  const payload: TNotificationPayload = {
    event,
    subject: subject.view,
    links: { console: consoleLink(publicUrl, subject.kind, subject.id) },
    ...(subject.bindingHash ? { bindingHash: subject.bindingHash } : {}),
  };
  const now = deps.now();
  const rows = deliveries.map((d) => ({ channel: d.channel, channelType: d.channelType, recipient: d.recipient, recipientUserId: d.userId }));
  return deps.db.transaction((tx) => enqueueOnce(tx, subject, event, rows, payload as unknown as Record<string, unknown>, now, "notif"));
}
