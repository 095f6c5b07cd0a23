import { type AnyColumn, and, eq, inArray, ne, sql } from "drizzle-orm";
import type { TAgentPolicy } from "../../server/core/agent-policy";
import type { Db } from "../client";
import { approvals, questions, responses, users } from "../schema";

/**
 * The approvals, questions and runs notifications are about, read as the notifier needs them:
 * pending ones to announce, settled ones to report as lifecycle facts, and the state of one
 * subject right before a delivery.
 */

type TApprovalRow = typeof approvals.$inferSelect;
type TQuestionRow = typeof questions.$inferSelect;
type TRunRow = typeof responses.$inferSelect;

/** Items not announced yet come first, so a backlog beyond one batch cannot starve new ones. */
const unplannedFirst = (id: AnyColumn) => sql`exists (select 1 from notification_plans p where p.subject_id = ${id} and p.event = 'requested')`;

/** Up to `limit` pending approvals, unannounced ones first, then oldest first; each with its run's agent and its requester's name and email. */
export async function pendingApprovalsToAnnounce(
  db: Db,
  limit: number,
): Promise<Array<{ approval: TApprovalRow; agent: string; requesterName: string | null; requesterEmail: string | null }>> {
  return db
    .select({ approval: approvals, agent: responses.agent, requesterName: users.name, requesterEmail: users.email })
    .from(approvals)
    .innerJoin(responses, eq(responses.id, approvals.responseId))
    .leftJoin(users, eq(users.id, approvals.userId))
    .where(eq(approvals.status, "pending"))
    .orderBy(unplannedFirst(approvals.id), approvals.createdAt)
    .limit(limit);
}

/** Up to `limit` pending questions, unannounced ones first, then oldest first; each with its run's agent (null outside a run). */
export async function pendingQuestionsToAnnounce(db: Db, limit: number): Promise<Array<{ question: TQuestionRow; agent: string | null }>> {
  return db
    .select({ question: questions, agent: responses.agent })
    .from(questions)
    .leftJoin(responses, eq(responses.id, questions.responseId))
    .where(eq(questions.status, "pending"))
    .orderBy(unplannedFirst(questions.id), questions.createdAt)
    .limit(limit);
}

/** The approvals among `ids` that are no longer pending, each with its run's agent. */
export async function settledApprovalsWithAgent(tx: Db, ids: string[]): Promise<Array<{ a: TApprovalRow; agent: string }>> {
  return tx
    .select({ a: approvals, agent: responses.agent })
    .from(approvals)
    .innerJoin(responses, eq(responses.id, approvals.responseId))
    .where(and(inArray(approvals.id, ids), ne(approvals.status, "pending")));
}

/** The questions among `ids` that are no longer pending. */
export async function settledQuestions(tx: Db, ids: string[]): Promise<TQuestionRow[]> {
  return tx
    .select()
    .from(questions)
    .where(and(inArray(questions.id, ids), ne(questions.status, "pending")));
}

/** The runs among `ids` that completed or failed. */
export async function finishedRuns(tx: Db, ids: string[]): Promise<TRunRow[]> {
  return tx
    .select()
    .from(responses)
    .where(and(inArray(responses.id, ids), inArray(responses.status, ["completed", "failed"])));
}

/** An approval's state for a delivery about it: status, owner, expiry, and what the decision rule needs; null when it is gone. */
export async function approvalStateForDelivery(
  db: Db,
  approvalId: string,
): Promise<{ status: string; userId: string; expiresAt: Date; requiredApprovals: number; agent: string; agentPolicy: TAgentPolicy | null } | null> {
  const [a] = await db
    .select({ status: approvals.status, userId: approvals.userId, expiresAt: approvals.expiresAt, requiredApprovals: approvals.requiredApprovals, agent: responses.agent, agentPolicy: responses.agentPolicy })
    .from(approvals)
    .innerJoin(responses, eq(responses.id, approvals.responseId))
    .where(eq(approvals.id, approvalId));
  return a ?? null;
}

/** A question's state for a delivery about it: status, owner and expiry; null when it is gone. */
export async function questionStateForDelivery(db: Db, questionId: string): Promise<{ status: string; userId: string; expiresAt: Date } | null> {
  const [q] = await db.select({ status: questions.status, userId: questions.userId, expiresAt: questions.expiresAt }).from(questions).where(eq(questions.id, questionId));
  return q ?? null;
}
