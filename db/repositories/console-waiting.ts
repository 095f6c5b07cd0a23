import { and, asc, eq, like, not, sql } from "drizzle-orm";
import type { TRisk } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { approvals, clientToolRequests, questions, responses, steeringMessages, users } from "../schema";

export const WAITING_KINDS = ["approval", "question", "client_tool", "device", "steering"] as const;
export type TWaitingKind = (typeof WAITING_KINDS)[number];

/** One thing a suspended (or steered) response waits on. */
export type TWaitingItem = {
  kind: TWaitingKind;
  /** The approval, question, client-tool request or steering message id. */
  id: string;
  responseId: string | null;
  sessionId: string | null;
  agent: string | null;
  userId: string;
  userName: string;
  /** What is asked: the action, the question, the tool name, the steering text. */
  title: string;
  risk: TRisk | null;
  since: string;
  expiresAt: string | null;
};

/** Visibility: everything (null) or one user's objects. */
export type TScope = { userId: string | null };

const PER_KIND = 500;

const ownedBy = (column: Parameters<typeof eq>[0], scope: TScope) => (scope.userId ? eq(column, scope.userId) : undefined);

/** Node commands on paired devices are approvals of `node:<command>`. */
const isDevice = like(approvals.action, "node:%");

/**
 * Everything waiting in the workspace (or for one user), oldest first per kind, with exact
 * counts per kind. Each kind reads its own pending partial index.
 */
export async function listWaiting(db: Db, scope: TScope): Promise<{ items: TWaitingItem[]; counts: Record<TWaitingKind, number> }> {
  const [approvalRows, clientToolRows, questionRows, steeringRows, counts] = await Promise.all([
    db
      .select({ a: approvals, agent: responses.agent, userName: users.name })
      .from(approvals)
      .innerJoin(responses, eq(responses.id, approvals.responseId))
      .innerJoin(users, eq(users.id, approvals.userId))
      .where(and(sql`${approvals.status} = 'pending'`, ownedBy(approvals.userId, scope)))
      .orderBy(asc(approvals.createdAt))
      .limit(PER_KIND),
    db
      .select({ c: clientToolRequests, agent: responses.agent, userName: users.name })
      .from(clientToolRequests)
      .innerJoin(responses, eq(responses.id, clientToolRequests.responseId))
      .innerJoin(users, eq(users.id, clientToolRequests.userId))
      .where(and(sql`${clientToolRequests.status} = 'pending'`, ownedBy(clientToolRequests.userId, scope)))
      .orderBy(asc(clientToolRequests.createdAt))
      .limit(PER_KIND),
    db
      .select({ q: questions, agent: responses.agent, userName: users.name })
      .from(questions)
      .leftJoin(responses, eq(responses.id, questions.responseId))
      .innerJoin(users, eq(users.id, questions.userId))
      .where(and(sql`${questions.status} = 'pending'`, ownedBy(questions.userId, scope)))
      .orderBy(asc(questions.createdAt))
      .limit(PER_KIND),
    db
      .select({ s: steeringMessages, agent: responses.agent, ownerId: responses.userId, userName: users.name })
      .from(steeringMessages)
      .innerJoin(responses, eq(responses.id, steeringMessages.responseId))
      .innerJoin(users, eq(users.id, responses.userId))
      .where(and(sql`${steeringMessages.status} = 'queued'`, ownedBy(responses.userId, scope)))
      .orderBy(asc(steeringMessages.createdAt))
      .limit(PER_KIND),
    countWaiting(db, scope),
  ]);
  const items: TWaitingItem[] = [
    ...approvalRows.map(({ a, agent, userName }) => ({
      kind: (a.action.startsWith("node:") ? "device" : "approval") as TWaitingKind,
      id: a.id,
      responseId: a.responseId,
      sessionId: a.sessionId,
      agent,
      userId: a.userId,
      userName,
      title: a.action,
      risk: a.risk,
      since: a.createdAt.toISOString(),
      expiresAt: a.expiresAt.toISOString(),
    })),
    ...clientToolRows.map(({ c, agent, userName }) => ({
      kind: "client_tool" as const,
      id: c.id,
      responseId: c.responseId,
      sessionId: c.sessionId,
      agent,
      userId: c.userId,
      userName,
      title: c.name,
      risk: null,
      since: c.createdAt.toISOString(),
      expiresAt: c.expiresAt.toISOString(),
    })),
    ...questionRows.map(({ q, agent, userName }) => ({
      kind: "question" as const,
      id: q.id,
      responseId: q.responseId,
      sessionId: q.sessionId,
      agent,
      userId: q.userId,
      userName,
      title: q.questions.map((x) => x.question).join(" · "),
      risk: null,
      since: q.createdAt.toISOString(),
      expiresAt: q.expiresAt.toISOString(),
    })),
    ...steeringRows.map(({ s, agent, ownerId, userName }) => ({
      kind: "steering" as const,
      id: s.id,
      responseId: s.responseId,
      sessionId: s.sessionId,
      agent,
      userId: ownerId,
      userName,
      title: s.text.length > 200 ? `${s.text.slice(0, 200)}…` : s.text,
      risk: null,
      since: s.createdAt.toISOString(),
      expiresAt: null,
    })),
  ];
  return { items, counts };
}

async function countWaiting(db: Db, scope: TScope): Promise<Record<TWaitingKind, number>> {
  const n = sql<number>`count(*)::int`;
  const [[a], [d], [c], [q], [s]] = await Promise.all([
    db.select({ n }).from(approvals).where(and(sql`${approvals.status} = 'pending'`, not(isDevice), ownedBy(approvals.userId, scope))),
    db.select({ n }).from(approvals).where(and(sql`${approvals.status} = 'pending'`, isDevice, ownedBy(approvals.userId, scope))),
    db.select({ n }).from(clientToolRequests).where(and(sql`${clientToolRequests.status} = 'pending'`, ownedBy(clientToolRequests.userId, scope))),
    db.select({ n }).from(questions).where(and(sql`${questions.status} = 'pending'`, ownedBy(questions.userId, scope))),
    db
      .select({ n })
      .from(steeringMessages)
      .innerJoin(responses, eq(responses.id, steeringMessages.responseId))
      .where(and(sql`${steeringMessages.status} = 'queued'`, ownedBy(responses.userId, scope))),
  ]);
  return { approval: a?.n ?? 0, device: d?.n ?? 0, client_tool: c?.n ?? 0, question: q?.n ?? 0, steering: s?.n ?? 0 };
}
