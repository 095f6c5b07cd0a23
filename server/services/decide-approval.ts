import { and, eq } from "drizzle-orm";
import { finishResponse } from "../../db/repositories/responses";
import { approvals, grants, responses } from "../../db/schema";
import { decisionPolicyOf, findAgent } from "../agents/config";
import { type TActor, canRead } from "../core/actor";
import { approvalBindingHash } from "../core/binding";
import { operationHash, type TGrantRequest } from "../core/decision";
import { DomainError, notFound } from "../core/errors";
import { decisionRefusal, requiredApprovalsFor } from "../core/separation-of-duties";
import { newId } from "../core/ids";
import type { TNewEvent } from "../core/frames";
import type { TTransport } from "../core/vocabulary";
import type { TDeps } from "../host/deps";
import { cancelQueuedSteering } from "../host/steering";
import { transact } from "../host/transact";
import { castVote } from "./approval-votes";
import { checkDecisionShape, grantTerms, prepareEdit, type TEdit } from "./decision-options";
import { expireApproval } from "./expire-pending";

export type TDecision = "approve" | "deny";
export type TApprovalRow = typeof approvals.$inferSelect;

export type TDecideInput = {
  approvalId: string;
  decision: TDecision;
  via: TTransport;
  /** Edit before approve: the arguments to run instead of the requested ones (validated by the tool's schema). */
  arguments?: Record<string, unknown>;
  /** Reply instead: with `deny`, the agent receives this message as the tool's result and the run goes on. */
  message?: string;
  /** With `approve`: allow this exact operation without a prompt for the session or for N days. */
  grant?: TGrantRequest;
  /** When the caller names the response (WebSocket frame, console), it must be the approval's. */
  expectedResponseId?: string;
  /** The binding the approver saw (console); a different current binding is rejected. */
  expectedBindingHash?: string;
};

export type TDecideResult = {
  approvalId: string;
  responseId: string;
  sessionId: string;
  decision: TDecision;
  resolvedSequence: number;
  /** True when the run goes on (approve, or a reply): callers wait for its next boundary. */
  continues: boolean;
  edited: boolean;
  grantId: string | null;
  /** False when this was one approve vote of a quorum that is not complete yet: nothing settled, the run still waits. */
  settled: boolean;
  /** Distinct approvals recorded so far (this one included), and how many the approval needs. */
  approvals: number;
  requiredApprovals: number;
};

/**
 * Commits a decision exactly once: a conditional update of the pending row (status and binding
 * hash must still match) plus the `approval.resolved` frame, in one transaction. Losers get 409.
 * An edit re-binds the approval to the edited operation in that same update; a reply denies the
 * operation but resumes the run; a grant is created in the same transaction as the decision.
 */
export async function decideApproval(deps: TDeps, actor: TActor, input: TDecideInput): Promise<TDecideResult> {
  checkDecisionShape(input);
  const [found] = await deps.db
    .select({ approval: approvals, agent: responses.agent })
    .from(approvals)
    .innerJoin(responses, eq(responses.id, approvals.responseId))
    .where(eq(approvals.id, input.approvalId));
  const approval = found?.approval;
  if (!found || !approval || !canRead(actor, approval.userId)) throw notFound("approval", input.approvalId);
  // Separation of duties: the one rule, before anything else is looked at or changed.
  const refusal = decisionRefusal(actor, approval, decisionPolicyOf(found.agent));
  if (refusal !== null) throw new DomainError("forbidden", refusal);
  if (input.expectedResponseId !== undefined && input.expectedResponseId !== approval.responseId) {
    throw new DomainError("binding_changed", "This approval belongs to a different response; the decision was not applied.");
  }
  if (approval.status !== "pending") throw alreadySettled(approval.status);
  if (approval.expiresAt.getTime() <= deps.now().getTime()) {
    await expireApproval(deps, approval.id);
    throw new DomainError("expired", "This approval has expired; the operation was not run.");
  }
  const current = approvalBindingHash(approval);
  if (current !== approval.bindingHash || (input.expectedBindingHash !== undefined && input.expectedBindingHash !== approval.bindingHash)) {
    throw new DomainError("binding_changed", "The pending operation no longer matches what was approved; the decision was not applied.");
  }
  const quorum = approval.requiredApprovals > 1;
  if (quorum && (input.arguments !== undefined || input.grant !== undefined)) {
    throw new DomainError(
      "validation_failed",
      `This approval needs ${approval.requiredApprovals} approvals from different people, so it cannot be edited or carry a standing grant; approve it as asked or deny it.`,
    );
  }
  const terms = input.grant !== undefined ? grantTerms(found.agent, input.grant, deps.now()) : null;
  const edit = input.arguments !== undefined ? await prepareEdit(deps, approval, found.agent, input.arguments) : null;
  // An edit must not turn a single approval into an operation that would have needed a quorum.
  const editNeeds = edit ? requiredApprovalsFor(findAgent(found.agent)?.quorum, edit.risk) : 1;
  if (editNeeds > approval.requiredApprovals) {
    throw new DomainError(
      "validation_failed",
      `The edited operation is ${edit?.risk} risk and would need ${editNeeds} approvals from different people; approve it as asked or deny it. Nothing was approved.`,
    );
  }
  const reply = input.decision === "deny" && input.message !== undefined ? input.message.trim() : null;
  const continues = input.decision === "approve" || reply !== null;
  const grantId = terms ? newId("grant") : null;

  const result = await transact(deps, async (tx, emit): Promise<{ sequence: number; approvals: number } | { pending: number } | null> => {
    let approvalsSoFar = input.decision === "approve" ? 1 : 0;
    if (quorum) {
      const tally = await castVote(tx, { id: approval.id, bindingHash: current }, actor, { decision: input.decision, via: input.via });
      if (tally === null) return null;
      approvalsSoFar = tally;
      if (input.decision === "approve" && tally < approval.requiredApprovals) {
        const data = { approvalId: approval.id, decision: input.decision, approvals: tally, requiredApprovals: approval.requiredApprovals };
        await emit(approval.responseId, [{ type: "approval.voted", data, frame: false, actorUserId: actor.userId, transport: input.via }]);
        return { pending: tally };
      }
    }
    const [won] = await tx
      .update(approvals)
      .set({
        status: input.decision === "approve" ? "approved" : "denied",
        decidedBy: actor.userId,
        decidedVia: input.via,
        decidedAt: deps.now(),
        ...(edit ? editedColumns(approval, edit) : {}),
        ...(reply !== null ? { replyMessage: reply } : {}),
        ...(grantId ? { grantId } : {}),
      })
      .where(and(eq(approvals.id, approval.id), eq(approvals.status, "pending"), eq(approvals.bindingHash, current)))
      .returning();
    if (!won) return null;
    const [row] = await tx
      .update(responses)
      // A plain denial only locks the row here (drizzle rejects an empty SET); finishResponse settles it below.
      .set(continues ? { status: "in_progress" } : { updatedAt: deps.now() })
      .where(and(eq(responses.id, approval.responseId), eq(responses.status, "requires_action")))
      .returning();
    if (!row) throw new DomainError("conflict", "The response is no longer waiting for this approval.");
    const who = { actorUserId: actor.userId, transport: input.via };
    const data: Record<string, unknown> = { approvalId: approval.id, decision: input.decision };
    if (reply !== null) data.message = reply;
    if (edit) data.edited = { originalArguments: approval.arguments, arguments: edit.arguments, bindingHash: edit.bindingHash };
    const events: TNewEvent[] = [{ type: "approval.resolved", data, frame: true, ...who }];
    if (edit?.review) events.push({ type: "review.verdict", data: { callId: approval.callId, toolName: approval.toolName, edited: true, ...edit.review }, frame: true });
    if (terms && grantId) {
      const operation = { arguments: edit?.arguments ?? approval.arguments, cwd: edit ? edit.cwd : approval.cwd };
      await tx.insert(grants).values({
        id: grantId,
        userId: approval.userId,
        agent: found.agent,
        toolName: approval.toolName,
        action: approval.action,
        ...operation,
        operationHash: operationHash({ userId: approval.userId, agent: found.agent, action: approval.action, arguments: operation.arguments }),
        scope: terms.scope,
        sessionId: terms.scope === "session" ? approval.sessionId : null,
        expiresAt: terms.expiresAt,
        approvalId: approval.id,
        createdBy: actor.userId,
        createdVia: input.via,
      });
      events.push({ type: "grant.created", data: { grantId, approvalId: approval.id, scope: terms.scope, expiresAt: terms.expiresAt?.toISOString() ?? null, action: approval.action }, frame: false, ...who });
    }
    const [frame] = await emit(row.id, events);
    if (!continues) {
      await cancelQueuedSteering(deps, tx, emit, row.id);
      const envelope = await finishResponse(tx, row, "denied");
      await emit(row.id, [{ type: "response.completed", data: { ...envelope, responseId: row.id }, frame: true }]);
    }
    return { sequence: frame?.sequence ?? 0, approvals: approvalsSoFar };
  });
  if (result === null) {
    const [now] = await deps.db.select({ status: approvals.status }).from(approvals).where(eq(approvals.id, approval.id));
    throw alreadySettled(now?.status ?? "approved");
  }
  deps.bus.publishInbox({ kind: "approval", responseId: approval.responseId, id: approval.id });
  const base = { approvalId: approval.id, responseId: approval.responseId, sessionId: approval.sessionId, decision: input.decision, requiredApprovals: approval.requiredApprovals };
  if ("pending" in result) return { ...base, resolvedSequence: 0, continues: false, edited: false, grantId: null, settled: false, approvals: result.pending };
  if (continues) deps.bus.publishWake(approval.responseId, "resume");
  return { ...base, resolvedSequence: result.sequence, continues, edited: edit !== null, grantId, settled: true, approvals: result.approvals };
}

/** The approval re-bound to the edited operation; the requested one is kept beside it. */
const editedColumns = (approval: TApprovalRow, edit: TEdit) => ({
  originalArguments: approval.arguments,
  originalBindingHash: approval.bindingHash,
  arguments: edit.arguments,
  cwd: edit.cwd,
  bindingHash: edit.bindingHash,
  message: edit.message,
  risk: edit.risk,
});

function alreadySettled(status: string): DomainError {
  if (status === "expired") return new DomainError("expired", "This approval has expired; the operation was not run.");
  if (status === "cancelled") return new DomainError("conflict", "The response was cancelled; this approval can no longer be decided.");
  return new DomainError("already_decided", `This approval was already ${status === "approved" ? "approved" : "denied"}; a decision is used once.`);
}
