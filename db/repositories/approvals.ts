import { and, desc, eq, inArray, lte, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { TAgentPolicy } from "../../server/core/agent-policy";
import type { TPendingRef } from "../../server/core/pending";
import type { TTransport } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { prepared, rawSlot, slot } from "../prepared";
import { approvals, responses, users } from "../schema";

export type TApprovalRow = typeof approvals.$inferSelect;
export type TApprovalStatus = TApprovalRow["status"];

/** An approval with what its run says about it: the agent, the policy its decisions follow, what the run waits on. */
export type TApprovalWithRun = { approval: TApprovalRow; agent: string; agentPolicy: TAgentPolicy | null; pending: TPendingRef | null };

const approvalWithRun = (db: Db) =>
  db
    .select({ approval: approvals, agent: responses.agent, agentPolicy: responses.agentPolicy, pending: responses.pendingAction })
    .from(approvals)
    .innerJoin(responses, eq(responses.id, approvals.responseId))
    .where(eq(approvals.id, sql.placeholder("id")));

/** The approval `id` with its run (none when it does not exist). */
export const loadApprovalWithRun = prepared<{ id: string }, TApprovalWithRun[]>("load_approval", approvalWithRun);

/** As {@link loadApprovalWithRun}, with the approval's and the run's rows locked (`for update`). */
export const lockApprovalWithRun = prepared<{ id: string }, TApprovalWithRun[]>("load_approval_for_update", (db) => approvalWithRun(db).for("update"));

/** A decision on a pending approval: who decided, how and when, against the binding the decider saw. */
export type TApprovalDecision = { id: string; status: "approved" | "denied"; by: string; via: TTransport; at: Date; bindingHash: string };

/** Settles a still-pending approval whose binding is unchanged (a plain decision: no edit, reply or grant): the row's id, or none. */
export const settlePendingApproval = prepared<TApprovalDecision, Array<{ id: string }>>("decide_approval", (db) =>
  db
    .update(approvals)
    .set({ status: rawSlot("status"), decidedBy: rawSlot("by"), decidedVia: rawSlot("via"), decidedAt: slot("at", approvals.decidedAt) })
    .where(and(eq(approvals.id, sql.placeholder("id")), eq(approvals.status, "pending"), eq(approvals.bindingHash, sql.placeholder("bindingHash"))))
    .returning({ id: approvals.id }),
);

/** The columns a decision with an edit, a reply or a grant stores beside its status. */
export type TDecisionExtras = Partial<Pick<TApprovalRow, "originalArguments" | "originalBindingHash" | "arguments" | "cwd" | "bindingHash" | "message" | "risk" | "replyMessage" | "grantId">>;

/**
 * Settles a still-pending approval whose binding is unchanged, storing `extras` with the decision:
 * the row's id, or none. The statement is sent when the result is first awaited, not before (the
 * caller orders it after the decision's other writes).
 */
export function settlePendingApprovalWith(tx: Db, decision: TApprovalDecision, extras: TDecisionExtras): PromiseLike<Array<{ id: string }>> {
  return tx
    .update(approvals)
    .set({ status: decision.status, decidedBy: decision.by, decidedVia: decision.via, decidedAt: decision.at, ...extras })
    .where(and(eq(approvals.id, decision.id), eq(approvals.status, "pending"), eq(approvals.bindingHash, decision.bindingHash)))
    .returning({ id: approvals.id });
}

/** An approval's status now; null when it does not exist. */
export async function approvalStatus(db: Db, approvalId: string): Promise<TApprovalStatus | null> {
  const [row] = await db.select({ status: approvals.status }).from(approvals).where(eq(approvals.id, approvalId));
  return row?.status ?? null;
}

/** One approval by id, whatever its status; null when it does not exist. */
export async function approvalById(db: Db, approvalId: string): Promise<TApprovalRow | null> {
  const [row] = await db.select().from(approvals).where(eq(approvals.id, approvalId));
  return row ?? null;
}

/** One approval by id while it is pending; null otherwise. */
export async function pendingApprovalById(db: Db, approvalId: string): Promise<TApprovalRow | null> {
  const [row] = await db.select().from(approvals).where(and(eq(approvals.id, approvalId), eq(approvals.status, "pending")));
  return row ?? null;
}

/** The query of pending approvals whose time is up at `now`, as `(type, id)` rows (the expiry sweep unions it with the other kinds'). */
export const dueApprovalsQuery = (now: Date): SQL =>
  sql`select ${"approval"}::text as type, ${approvals.id} as id from ${approvals} where ${approvals.status} = 'pending' and ${approvals.expiresAt} <= ${now.toISOString()}::timestamptz`;

/** Expires a pending approval due by `dueBy` (recorded as decided at `decidedAt` by the system): the expired row, or null. */
export async function expireDueApproval(tx: Db, approvalId: string, decidedAt: Date, dueBy: Date): Promise<TApprovalRow | null> {
  const [row] = await tx
    .update(approvals)
    .set({ status: "expired", decidedAt, decidedVia: "system" })
    .where(and(eq(approvals.id, approvalId), eq(approvals.status, "pending"), lte(approvals.expiresAt, dueBy)))
    .returning();
  return row ?? null;
}

/** Cancels every pending approval of a run that is being cancelled: their ids. */
export async function cancelPendingApprovalsOf(tx: Db, responseId: string, by: { userId: string | null; via: TTransport }, at: Date): Promise<string[]> {
  const rows = await tx
    .update(approvals)
    .set({ status: "cancelled", decidedAt: at, decidedVia: by.via, decidedBy: by.userId })
    .where(and(eq(approvals.responseId, responseId), eq(approvals.status, "pending")))
    .returning({ id: approvals.id });
  return rows.map((r) => r.id);
}

/**
 * Locks the run that waits on exactly the pending row `pendingId` (approval, question or client
 * tool) and touches it: the run's row, or null when it waits on something else or is settled.
 */
export async function lockRunWaitingOn(tx: Db, responseId: string, pendingId: string) {
  const [row] = await tx
    .update(responses)
    .set({ updatedAt: sql`now()` })
    .where(and(eq(responses.id, responseId), eq(responses.status, "requires_action"), sql`${responses.pendingAction}->>'id' = ${pendingId}`))
    .returning();
  return row ?? null;
}

/** The approval with its run's agent (what a Slack message or a link page shows); null when it does not exist. */
export async function approvalWithAgent(db: Db, approvalId: string): Promise<{ approval: TApprovalRow; agent: string } | null> {
  const [found] = await db.select({ approval: approvals, agent: responses.agent }).from(approvals).innerJoin(responses, eq(responses.id, approvals.responseId)).where(eq(approvals.id, approvalId));
  return found ?? null;
}

/** Who settled an approval, how and when (the decider's name and email when a person did); null when it does not exist. */
export async function approvalSettlement(db: Db, approvalId: string) {
  const [row] = await db
    .select({ status: approvals.status, decidedAt: approvals.decidedAt, decidedVia: approvals.decidedVia, name: users.name, email: users.email })
    .from(approvals)
    .leftJoin(users, eq(users.id, approvals.decidedBy))
    .where(eq(approvals.id, approvalId));
  return row ?? null;
}

/** The operation an approval asks to run (its action and arguments); null when it does not exist. */
export async function approvalOperation(db: Db, approvalId: string): Promise<{ action: string; arguments: unknown } | null> {
  const [found] = await db.select({ action: approvals.action, arguments: approvals.arguments }).from(approvals).where(eq(approvals.id, approvalId));
  return found ?? null;
}

/** The run an approval belongs to; null when the approval does not exist. */
export async function responseIdOfApproval(db: Db, approvalId: string): Promise<string | null> {
  const [origin] = await db.select({ responseId: approvals.responseId }).from(approvals).where(eq(approvals.id, approvalId));
  return origin?.responseId ?? null;
}

/** Whoever decided an approval, joined under their own name (the requester is `users`). */
const decider = alias(users, "decider");

/**
 * The newest 200 approvals, pending or decided (only `ids` when given; only `userId`'s when not
 * null), with the run's agent and the requester's and the decider's names and emails.
 */
export async function approvalsWithPeople(db: Db, filter: { status: "pending" | "decided"; ids?: string[]; userId: string | null }) {
  const statusFilter = filter.status === "pending" ? eq(approvals.status, "pending") : inArray(approvals.status, ["approved", "denied", "expired", "cancelled"]);
  const filters = and(statusFilter, filter.ids ? inArray(approvals.id, filter.ids) : undefined);
  return db
    .select({ approval: approvals, agent: responses.agent, userName: users.name, userEmail: users.email, deciderName: decider.name, deciderEmail: decider.email })
    .from(approvals)
    .innerJoin(responses, eq(responses.id, approvals.responseId))
    .innerJoin(users, eq(users.id, approvals.userId))
    .leftJoin(decider, eq(decider.id, approvals.decidedBy))
    .where(filter.userId === null ? filters : and(filters, eq(approvals.userId, filter.userId)))
    .orderBy(desc(approvals.createdAt))
    .limit(200);
}
