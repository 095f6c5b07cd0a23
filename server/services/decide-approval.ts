import { and, eq } from "drizzle-orm";
import { finishResponse } from "../../db/repositories/responses";
import { approvals, responses } from "../../db/schema";
import { type TActor, canDecide, canRead } from "../core/actor";
import { bindingHash } from "../core/binding";
import { DomainError, notFound } from "../core/errors";
import type { TTransport } from "../core/vocabulary";
import type { TDeps } from "../host/deps";
import { cancelQueuedSteering } from "../host/steering";
import { transact } from "../host/transact";
import { expireApproval } from "./expire-pending";

export type TDecision = "approve" | "deny";

export type TDecideInput = {
  approvalId: string;
  decision: TDecision;
  via: TTransport;
  /** When the caller names the response (WebSocket frame, console), it must be the approval's. */
  expectedResponseId?: string;
  /** The binding the approver saw (console); a different current binding is rejected. */
  expectedBindingHash?: string;
};

export type TDecideResult = { approvalId: string; responseId: string; sessionId: string; decision: TDecision; resolvedSequence: number };

/**
 * Commits a decision exactly once: a conditional update of the pending row (status and binding
 * hash must still match) plus the `approval.resolved` frame, in one transaction. Losers get 409.
 */
export async function decideApproval(deps: TDeps, actor: TActor, input: TDecideInput): Promise<TDecideResult> {
  const [approval] = await deps.db.select().from(approvals).where(eq(approvals.id, input.approvalId));
  if (!approval || !canRead(actor, approval.userId)) throw notFound("approval", input.approvalId);
  if (!canDecide(actor, approval.userId)) throw new DomainError("forbidden", "Your role cannot decide approvals.");
  if (input.expectedResponseId !== undefined && input.expectedResponseId !== approval.responseId) {
    throw new DomainError("binding_changed", "This approval belongs to a different response; the decision was not applied.");
  }
  if (approval.status !== "pending") throw alreadySettled(approval.status);
  if (approval.expiresAt.getTime() <= deps.now().getTime()) {
    await expireApproval(deps, approval.id);
    throw new DomainError("expired", "This approval has expired; the operation was not run.");
  }
  const current = bindingHash({
    userId: approval.userId,
    sessionId: approval.sessionId,
    responseId: approval.responseId,
    callId: approval.callId,
    action: approval.action,
    arguments: approval.arguments,
    cwd: approval.cwd,
  });
  if (current !== approval.bindingHash || (input.expectedBindingHash !== undefined && input.expectedBindingHash !== approval.bindingHash)) {
    throw new DomainError("binding_changed", "The pending operation no longer matches what was approved; the decision was not applied.");
  }
  const result = await transact(deps, async (tx, emit) => {
    const [won] = await tx
      .update(approvals)
      .set({ status: input.decision === "approve" ? "approved" : "denied", decidedBy: actor.userId, decidedVia: input.via, decidedAt: deps.now() })
      .where(and(eq(approvals.id, approval.id), eq(approvals.status, "pending"), eq(approvals.bindingHash, current)))
      .returning();
    if (!won) return null;
    const [row] = await tx
      .update(responses)
      // A denial only locks the row here (drizzle rejects an empty SET); finishResponse settles it below.
      .set(input.decision === "approve" ? { status: "in_progress" } : { updatedAt: deps.now() })
      .where(and(eq(responses.id, approval.responseId), eq(responses.status, "requires_action")))
      .returning();
    if (!row) throw new DomainError("conflict", "The response is no longer waiting for this approval.");
    const resolved = {
      type: "approval.resolved",
      data: { approvalId: approval.id, decision: input.decision },
      frame: true,
      actorUserId: actor.userId,
      transport: input.via,
    };
    if (input.decision === "approve") {
      const [frame] = await emit(row.id, [resolved]);
      return frame?.sequence ?? 0;
    }
    const [frame] = await emit(row.id, [resolved]);
    await cancelQueuedSteering(deps, tx, emit, row.id);
    const envelope = await finishResponse(tx, row, "denied");
    await emit(row.id, [{ type: "response.completed", data: { ...envelope, responseId: row.id }, frame: true }]);
    return frame?.sequence ?? 0;
  });
  if (result === null) {
    const [now] = await deps.db.select({ status: approvals.status }).from(approvals).where(eq(approvals.id, approval.id));
    throw alreadySettled(now?.status ?? "approved");
  }
  deps.bus.publishInbox({ kind: "approval", responseId: approval.responseId, id: approval.id });
  if (input.decision === "approve") deps.bus.publishWake(approval.responseId, "resume");
  return { approvalId: approval.id, responseId: approval.responseId, sessionId: approval.sessionId, decision: input.decision, resolvedSequence: result };
}

function alreadySettled(status: string): DomainError {
  if (status === "expired") return new DomainError("expired", "This approval has expired; the operation was not run.");
  if (status === "cancelled") return new DomainError("conflict", "The response was cancelled; this approval can no longer be decided.");
  return new DomainError("already_decided", `This approval was already ${status === "approved" ? "approved" : "denied"}; a decision is used once.`);
}
