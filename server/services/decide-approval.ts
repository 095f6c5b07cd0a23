import { approvalStatus, loadApprovalWithRun, lockApprovalWithRun, settlePendingApproval, settlePendingApprovalWith, type TApprovalRow, type TApprovalWithRun } from "../../db/repositories/approvals";
import { insertGrant } from "../../db/repositories/grants";
import { type TActor, canRead } from "../core/actor";
import { approvalBindingHash } from "../core/binding";
import { operationHash, type TGrantRequest } from "../core/decision";
import { DomainError, notFound, refused } from "../core/errors";
import { decisionRefusalCode, requiredApprovalsFor } from "../core/separation-of-duties";
import { newId } from "../core/ids";
import type { TNewEvent } from "../core/frames";
import type { TTransport } from "../core/vocabulary";
import type { TDeps, TRunDeps } from "../host/deps";
import { lockWaitingOn } from "../host/pending/approval";
import { endWaitingRun, resumeWith, settledValue, type TApprovedOperation, type TSettlement } from "../host/pending/contract";
import { expirePending } from "../host/pending/kinds";
import { transact } from "../host/transact";
import { endOnce, SPAN, startSpan } from "../observe/spans";
import type { TDecisionOutcome } from "../observe/port";
import { castVote } from "./approval-votes";
import { checkDecisionShape, grantTerms, prepareEdit, type TEdit } from "./decision-options";

export type TDecision = "approve" | "deny";

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

type TFound = TApprovalWithRun;

/** Everything a decision is checked against before it may change anything; throws the refusal. */
function checkDecision(deps: TDeps, actor: TActor, input: TDecideInput, found: TFound | undefined): "expired" | null {
  const approval = found?.approval;
  if (!found || !approval || !canRead(actor, approval.userId)) throw notFound("approval", input.approvalId);
  // Separation of duties: the one rule, before anything else is looked at or changed.
  const refusal = decisionRefusalCode(actor, approval, deps.agents.decisionPolicyOf(found.agent, found.agentPolicy));
  if (refusal !== null) throw refused("forbidden", refusal);
  if (input.expectedResponseId !== undefined && input.expectedResponseId !== approval.responseId) {
    throw refused("binding_changed", { code: "otherResponse" });
  }
  if (approval.status !== "pending") throw alreadySettled(approval.status);
  if (approval.expiresAt.getTime() <= deps.now().getTime()) return "expired";
  if (approvalBindingHash(approval) !== approval.bindingHash || (input.expectedBindingHash !== undefined && input.expectedBindingHash !== approval.bindingHash)) {
    throw refused("binding_changed", { code: "bindingChanged" });
  }
  if (approval.requiredApprovals > 1 && (input.arguments !== undefined || input.grant !== undefined)) {
    throw refused("validation_failed", { code: "quorumAsAsked", params: { n: approval.requiredApprovals } });
  }
  return null;
}

/** An edit is prepared (schema, confinement, maybe the reviewer) before the decision's transaction, never inside it. */
async function prepareEditOf(deps: TDeps, actor: TActor, input: TDecideInput): Promise<TEdit | null> {
  if (input.arguments === undefined) return null;
  const [found] = await loadApprovalWithRun(deps.db, { id: input.approvalId });
  if (checkDecision(deps, actor, input, found) === "expired" || !found) return null;
  const edit = await prepareEdit(deps, found.approval, found.agent, input.arguments);
  // An edit must not turn a single approval into an operation that would have needed a quorum.
  const editNeeds = edit ? requiredApprovalsFor(deps.agents.forRun(found.agent, found.agentPolicy)?.quorum, edit.risk) : 1;
  if (editNeeds > found.approval.requiredApprovals) {
    throw new DomainError(
      "validation_failed",
      `The edited operation is ${edit?.risk} risk and would need ${editNeeds} approvals from different people; approve it as asked or deny it. Nothing was approved.`,
    );
  }
  return edit;
}

/**
 * Commits a decision exactly once, in ONE transaction: the approval is read and locked, checked,
 * decided by a conditional update (status and binding hash must still match), the
 * `approval.resolved` frame appended, and the run either resumed and claimed for this process's
 * host (approve, reply instead) or ended (deny). Losers get 409. An edit re-binds the approval to
 * the edited operation in that same update; a grant is created in the same transaction.
 */
export async function decideApproval(deps: TRunDeps, actor: TActor, input: TDecideInput): Promise<TDecideResult> {
  // One span per decision (decider and channel), under the request's span when there is one.
  const decision = startSpan(deps.observe.tracer, SPAN.decision, undefined, {
    "countersign.approval_id": input.approvalId,
    "countersign.decider": actor.userId,
    "countersign.decider.role": actor.role,
    "countersign.channel": input.via,
    "countersign.decision": input.decision,
  });
  try {
    const decided = await decide(deps, actor, input, decision);
    endOnce(decision.span, decided.settled ? outcomeOf(input) : "voted");
    return decided;
  } catch (error) {
    endOnce(decision.span, error instanceof DomainError ? error.code : "error", error instanceof DomainError ? undefined : error);
    throw error;
  }
}

const outcomeOf = (input: TDecideInput): TDecisionOutcome => (input.decision === "approve" ? "approved" : input.message !== undefined ? "replied" : "denied");

async function decide(deps: TRunDeps, actor: TActor, input: TDecideInput, decision: ReturnType<typeof startSpan>): Promise<TDecideResult> {
  checkDecisionShape(input);
  const edit = await prepareEditOf(deps, actor, input);
  const reply = input.decision === "deny" && input.message !== undefined ? input.message.trim() : null;
  // An external approval (POST /v1/approvals) has no run to go on: a reply is a denial its caller reads.
  let continues = input.decision === "approve" || reply !== null;

  const result = await transact(deps, async (tx, emit, announce) => {
    const [found] = await lockApprovalWithRun(tx, { id: input.approvalId });
    if (checkDecision(deps, actor, input, found) === "expired" || !found) return { expired: true as const };
    const { approval } = found;
    const terms = input.grant !== undefined ? grantTerms({ find: (name) => deps.agents.forRun(name, found.agentPolicy) }, found.agent, input.grant, deps.now()) : null;
    const grantId = terms ? newId("grant") : null;
    const current = approval.bindingHash;
    let approvalsSoFar = input.decision === "approve" ? 1 : 0;
    const who = { actorUserId: actor.userId, transport: input.via };
    if (approval.requiredApprovals > 1) {
      const tally = await castVote(tx, { id: approval.id, bindingHash: current }, actor, { decision: input.decision, via: input.via });
      if (tally === null) return null;
      approvalsSoFar = tally;
      if (input.decision === "approve" && tally < approval.requiredApprovals) {
        const data = { approvalId: approval.id, decision: input.decision, approvals: tally, requiredApprovals: approval.requiredApprovals };
        await emit(approval.responseId, [{ type: "approval.voted", data, frame: false, ...who }]);
        announce({ k: "inbox", change: { kind: "approval", responseId: approval.responseId, id: approval.id } });
        return { found, pending: tally };
      }
    }
    const decision = { id: approval.id, status: input.decision === "approve" ? ("approved" as const) : ("denied" as const), by: actor.userId, via: input.via, at: deps.now(), bindingHash: current };
    // A plain decision (no edit, reply or grant: the common one) is a statement built once.
    const decided =
      !edit && reply === null && !grantId
        ? settlePendingApproval(tx, decision)
        : settlePendingApprovalWith(tx, decision, { ...(edit ? editedColumns(approval, edit) : {}), ...(reply !== null ? { replyMessage: reply } : {}), ...(grantId ? { grantId } : {}) });
    // The decided approval as the update above stores it (the row is locked: nothing else changes it).
    const won: TApprovalRow = { ...approval, ...(edit ? editedColumns(approval, edit) : {}) };
    announce({ k: "inbox", change: { kind: "approval", responseId: approval.responseId, id: approval.id } });
    const data: Record<string, unknown> = { approvalId: approval.id, decision: input.decision };
    if (reply !== null) data.message = reply;
    if (edit) data.edited = { originalArguments: approval.arguments, arguments: edit.arguments, bindingHash: edit.bindingHash };
    const events: TNewEvent[] = [{ type: "approval.resolved", data, frame: true, ...who }];
    if (edit?.review) events.push({ type: "review.verdict", data: { callId: approval.callId, toolName: approval.toolName, edited: true, ...edit.review }, frame: true });
    if (terms && grantId) {
      const operation = { arguments: edit?.arguments ?? approval.arguments, cwd: edit ? edit.cwd : approval.cwd };
      await insertGrant(tx, {
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
    const pending = { type: "approval" as const, id: approval.id, callId: approval.callId };
    if (approval.external || !continues) {
      // The conditional update must have won before the run is ended (under the lock it always does).
      const [row] = await decided;
      if (!row) return null;
    }
    if (approval.external) {
      // Nothing runs here: the record completes (approved) or is denied; the caller consumes the approval and runs it.
      continues = input.decision === "approve";
      const run = await lockWaitingOn(tx, approval.responseId, approval.id);
      if (!run) throw refused("conflict", { code: "notWaiting" });
      const [frame] = await emit(run.id, events);
      await endWaitingRun(deps, tx, emit, announce, run, continues ? "completed" : "denied");
      return { found, won, grantId, sequence: frame?.sequence ?? 0, approvals: approvalsSoFar, claimed: null };
    }
    if (!continues) {
      const run = await lockWaitingOn(tx, approval.responseId, approval.id);
      if (!run) throw refused("conflict", { code: "notWaiting" });
      const [frame] = await emit(run.id, events);
      await endWaitingRun(deps, tx, emit, announce, run, "denied");
      return { found, won, grantId, sequence: frame?.sequence ?? 0, approvals: approvalsSoFar, claimed: null };
    }
    const settlement: TSettlement = reply !== null ? { type: "approval", reply } : { type: "approval", approved: approvedOperationOf(won) };
    // The decision and the resume go to the database as one batch; a lost update rolls the resume back.
    const [update, resume] = await Promise.allSettled([decided, resumeWith(deps, deps.host, tx, emit, approval.responseId, { pending, settlement, events, runsTool: reply === null })]);
    if (settledValue(update).length === 0) throw new LostDecision();
    const resumed = settledValue(resume);
    return { found, won, grantId, sequence: resumed.sequence, approvals: approvalsSoFar, claimed: resumed.run };
  }).catch((error: unknown) => {
    if (error instanceof LostDecision) return null;
    throw error;
  });
  if (result === null) {
    throw alreadySettled((await approvalStatus(deps.db, input.approvalId)) ?? "approved");
  }
  if ("expired" in result) {
    await expirePending(deps, deps.host, { type: "approval", id: input.approvalId });
    throw refused("expired", { code: "approvalExpired" });
  }
  const approval = result.found.approval;
  const base = { approvalId: approval.id, responseId: approval.responseId, sessionId: approval.sessionId, decision: input.decision, requiredApprovals: approval.requiredApprovals };
  if ("pending" in result) return { ...base, resolvedSequence: 0, continues: false, edited: false, grantId: null, settled: false, approvals: result.pending ?? 0 };
  // The approval's wait, from its request to this decision (it may have outlived the process that asked).
  const waitedMs = deps.now().getTime() - approval.createdAt.getTime();
  const wait = startSpan(deps.observe.tracer, SPAN.approvalWait, decision.context, { "countersign.approval_id": approval.id, "countersign.response_id": approval.responseId, "countersign.risk": approval.risk }, { startTime: approval.createdAt });
  endOnce(wait.span, outcomeOf(input));
  decision.span.setAttribute("countersign.response_id", approval.responseId);
  deps.observe.metrics.decided({ outcome: outcomeOf(input), channel: input.via, waitedMs });
  if (result.claimed) deps.host.startClaimed({ ...result.claimed, resumedBy: decision.span.spanContext() });
  return { ...base, resolvedSequence: result.sequence, continues, edited: edit !== null, grantId: result.grantId, settled: true, approvals: result.approvals ?? 1 };
}

/** The decided operation the resumed attempt re-checks before running it. */
const approvedOperationOf = (a: TApprovalRow): TApprovedOperation => ({
  userId: a.userId,
  sessionId: a.sessionId,
  responseId: a.responseId,
  callId: a.callId,
  action: a.action,
  arguments: a.arguments,
  cwd: a.cwd,
  bindingHash: a.bindingHash,
  originalBindingHash: a.originalBindingHash,
  originalArguments: a.originalArguments,
});

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

/** The conditional update found the approval changed after all: the whole transaction rolls back, and the caller reports what settled it. */
class LostDecision extends Error {}

function alreadySettled(status: string): DomainError {
  if (status === "expired") return refused("expired", { code: "approvalExpired" });
  if (status === "cancelled") return refused("conflict", { code: "approvalCancelled" });
  return refused("already_decided", { code: "alreadyDecided", params: { status: status === "approved" ? "approved" : "denied" } });
}
