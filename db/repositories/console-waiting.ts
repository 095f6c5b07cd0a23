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
  /** The owner's email, shown beside the name. */
  userEmail: string;
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

/** Pending approvals (device commands are approvals of `node:<command>`), oldest first, and their counts. */
export async function waitingApprovals(db: Db, scope: TScope): Promise<{ items: TWaitingItem[]; counts: Partial<Record<TWaitingKind, number>> }> {
  const n = sql<number>`count(*)::int`;
  const pending = and(sql`${approvals.status} = 'pending'`, ownedBy(approvals.userId, scope));
  const [rows, [plain], [device]] = await Promise.all([
    db
      .select({ a: approvals, agent: responses.agent, userName: users.name, userEmail: users.email })
      .from(approvals)
      .innerJoin(responses, eq(responses.id, approvals.responseId))
      .innerJoin(users, eq(users.id, approvals.userId))
      .where(pending)
      .orderBy(asc(approvals.createdAt))
      .limit(PER_KIND),
    db.select({ n }).from(approvals).where(and(pending, not(isDevice))),
    db.select({ n }).from(approvals).where(and(pending, isDevice)),
  ]);
  const items = rows.map(({ a, agent, userName, userEmail }) => ({
    kind: (a.action.startsWith("node:") ? "device" : "approval") as TWaitingKind,
    id: a.id,
    responseId: a.responseId,
    sessionId: a.sessionId,
    agent,
    userId: a.userId,
    userName,
    userEmail,
    title: a.action,
    risk: a.risk,
    since: a.createdAt.toISOString(),
    expiresAt: a.expiresAt.toISOString(),
  }));
  return { items, counts: { approval: plain?.n ?? 0, device: device?.n ?? 0 } };
}

/** Pending client-tool requests, oldest first, and their count. */
export async function waitingClientTools(db: Db, scope: TScope): Promise<{ items: TWaitingItem[]; counts: Partial<Record<TWaitingKind, number>> }> {
  const pending = and(sql`${clientToolRequests.status} = 'pending'`, ownedBy(clientToolRequests.userId, scope));
  const [rows, [count]] = await Promise.all([
    db
      .select({ c: clientToolRequests, agent: responses.agent, userName: users.name, userEmail: users.email })
      .from(clientToolRequests)
      .innerJoin(responses, eq(responses.id, clientToolRequests.responseId))
      .innerJoin(users, eq(users.id, clientToolRequests.userId))
      .where(pending)
      .orderBy(asc(clientToolRequests.createdAt))
      .limit(PER_KIND),
    db.select({ n: sql<number>`count(*)::int` }).from(clientToolRequests).where(pending),
  ]);
  const items = rows.map(({ c, agent, userName, userEmail }) => ({
    kind: "client_tool" as const,
    id: c.id,
    responseId: c.responseId,
    sessionId: c.sessionId,
    agent,
    userId: c.userId,
    userName,
    userEmail,
    title: c.name,
    risk: null,
    since: c.createdAt.toISOString(),
    expiresAt: c.expiresAt.toISOString(),
  }));
  return { items, counts: { client_tool: count?.n ?? 0 } };
}

/** Pending questions (asked by runs or through the gateway), oldest first, and their count. */
export async function waitingQuestions(db: Db, scope: TScope): Promise<{ items: TWaitingItem[]; counts: Partial<Record<TWaitingKind, number>> }> {
  const pending = and(sql`${questions.status} = 'pending'`, ownedBy(questions.userId, scope));
  const [rows, [count]] = await Promise.all([
    db
      .select({ q: questions, agent: responses.agent, userName: users.name, userEmail: users.email })
      .from(questions)
      .leftJoin(responses, eq(responses.id, questions.responseId))
      .innerJoin(users, eq(users.id, questions.userId))
      .where(pending)
      .orderBy(asc(questions.createdAt))
      .limit(PER_KIND),
    db.select({ n: sql<number>`count(*)::int` }).from(questions).where(pending),
  ]);
  const items = rows.map(({ q, agent, userName, userEmail }) => ({
    kind: "question" as const,
    id: q.id,
    responseId: q.responseId,
    sessionId: q.sessionId,
    agent,
    userId: q.userId,
    userName,
    userEmail,
    title: q.questions.map((x) => x.question).join(" · "),
    risk: null,
    since: q.createdAt.toISOString(),
    expiresAt: q.expiresAt.toISOString(),
  }));
  return { items, counts: { question: count?.n ?? 0 } };
}

/** Steering messages still queued for running responses (not a pending action: nothing waits on them), and their count. */
export async function waitingSteering(db: Db, scope: TScope): Promise<{ items: TWaitingItem[]; counts: Partial<Record<TWaitingKind, number>> }> {
  const queued = and(sql`${steeringMessages.status} = 'queued'`, ownedBy(responses.userId, scope));
  const [rows, [count]] = await Promise.all([
    db
      .select({ s: steeringMessages, agent: responses.agent, ownerId: responses.userId, userName: users.name, userEmail: users.email })
      .from(steeringMessages)
      .innerJoin(responses, eq(responses.id, steeringMessages.responseId))
      .innerJoin(users, eq(users.id, responses.userId))
      .where(queued)
      .orderBy(asc(steeringMessages.createdAt))
      .limit(PER_KIND),
    db.select({ n: sql<number>`count(*)::int` }).from(steeringMessages).innerJoin(responses, eq(responses.id, steeringMessages.responseId)).where(queued),
  ]);
  const items = rows.map(({ s, agent, ownerId, userName, userEmail }) => ({
    kind: "steering" as const,
    id: s.id,
    responseId: s.responseId,
    sessionId: s.sessionId,
    agent,
    userId: ownerId,
    userName,
    userEmail,
    title: s.text.length > 200 ? `${s.text.slice(0, 200)}…` : s.text,
    risk: null,
    since: s.createdAt.toISOString(),
    expiresAt: null,
  }));
  return { items, counts: { steering: count?.n ?? 0 } };
}
