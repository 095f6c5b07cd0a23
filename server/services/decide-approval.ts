import type { Db } from "../../db/client";
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
import { endWaitingRun, resumeWith, settledValue, type TApprovedOperation, type TClaimedRun, type TSettlement } from "../host/pending/contract";
import { expirePending } from "../host/pending/kinds";
import { type TAnnounce, type TEmit, transact } from "../host/transact";
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

/** A decision as worked out before its transaction: the prepared edit, the trimmed reply, and whether the run goes on. */
type TPlan = { deps: TRunDeps; actor: TActor; input: TDecideInput; edit: TEdit | null; reply: string | null; continues: boolean };

/** The decision's transaction and what it gives its steps. */
type TTx = { tx: Db; emit: TEmit; announce: TAnnounce };

/** A settled approval: as the decision stored it, with what its run became. */
type TSettled = { found: TFound; won: TApprovalRow; grantId: string | null; sequence: number; approvals: number; claimed: TClaimedRun | null; continues: boolean };

/** What the transaction did: nothing (the approval changed under it), found it expired, recorded one vote of a quorum, or settled it. */
type TCommitted = null | { expired: true } | { found: TFound; pending: number } | TSettled;

async function decide(deps: TRunDeps, actor: TActor, input: TDecideInput, decision: ReturnType<typeof startSpan>): Promise<TDecideResult> {
  checkDecisionShape(input);
  const edit = await prepareEditOf(deps, actor, input);
  const reply = input.decision === "deny" && input.message !== undefined ? input.message.trim() : null;
  // An external approval (POST /v1/approvals) has no run to go on: a reply is a denial its caller reads.
  const plan: TPlan = { deps, actor, input, edit, reply, continues: input.decision === "approve" || reply !== null };
  const result = await transact(deps, (tx, emit, announce) => decideInTransaction(plan, { tx, emit, announce })).catch((error: unknown) => {
    if (error instanceof LostDecision) return null;
    throw error;
  });
  if (result === null) throw alreadySettled((await approvalStatus(deps.db, input.approvalId)) ?? "approved");
  if ("expired" in result) {
    await expirePending(deps, deps.host, { type: "approval", id: input.approvalId });
    throw refused("expired", { code: "approvalExpired" });
  }
  const approval = result.found.approval;
  const base = { approvalId: approval.id, responseId: approval.responseId, sessionId: approval.sessionId, decision: input.decision, requiredApprovals: approval.requiredApprovals };
  if ("pending" in result) return { ...base, resolvedSequence: 0, continues: false, edited: false, grantId: null, settled: false, approvals: result.pending };
  reportSettled(plan, approval, decision);
  if (result.claimed) deps.host.startClaimed({ ...result.claimed, resumedBy: decision.span.spanContext() });
  return { ...base, resolvedSequence: result.sequence, continues: result.continues, edited: edit !== null, grantId: result.grantId, settled: true, approvals: result.approvals };
}

/** The steps of the one transaction: load and check, choose the outcome, record it, then end or resume the run. */
async function decideInTransaction(plan: TPlan, t: TTx): Promise<TCommitted> {
  const found = await loadAndCheck(plan, t.tx);
  if (found === "expired") return { expired: true };
  const chosen = await chooseOutcome(plan, t, found);
  if (chosen === null) return null;
  if ("pending" in chosen) return { found, pending: chosen.pending };
  const recorded = await recordDecision(plan, t, found, chosen);
  return endOrResume(plan, t, found, chosen, recorded);
}

/** Reads and locks the approval with its run and checks the decision against it; "expired" when its time is up. */
async function loadAndCheck(plan: TPlan, tx: Db): Promise<TFound | "expired"> {
  const [found] = await lockApprovalWithRun(tx, { id: plan.input.approvalId });
  if (checkDecision(plan.deps, plan.actor, plan.input, found) === "expired" || !found) return "expired";
  return found;
}

/** A decision that settles the approval: the grant it creates, if any, and the approvals counted so far. */
type TChosen = { terms: ReturnType<typeof grantTerms> | null; grantId: string | null; approvals: number };

const whoOf = (plan: TPlan) => ({ actorUserId: plan.actor.userId, transport: plan.input.via });

/**
 * Whether this decision settles the approval: a quorum approval records the vote first, and an
 * approve vote short of the quorum only tells the inbox (`pending`: the tally). Null when the
 * approval changed under the vote.
 */
async function chooseOutcome(plan: TPlan, { tx, emit, announce }: TTx, found: TFound): Promise<TChosen | { pending: number } | null> {
  const { deps, input } = plan;
  const { approval } = found;
  const terms = input.grant !== undefined ? grantTerms({ find: (name) => deps.agents.forRun(name, found.agentPolicy) }, found.agent, input.grant, deps.now()) : null;
  const grantId = terms ? newId("grant") : null;
  if (approval.requiredApprovals <= 1) return { terms, grantId, approvals: input.decision === "approve" ? 1 : 0 };
  const tally = await castVote(tx, { id: approval.id, bindingHash: approval.bindingHash }, plan.actor, { decision: input.decision, via: input.via });
  if (tally === null) return null;
  if (input.decision === "approve" && tally < approval.requiredApprovals) {
    const data = { approvalId: approval.id, decision: input.decision, approvals: tally, requiredApprovals: approval.requiredApprovals };
    await emit(approval.responseId, [{ type: "approval.voted", data, frame: false, ...whoOf(plan) }]);
    announce({ k: "inbox", change: { kind: "approval", responseId: approval.responseId, id: approval.id } });
    return { pending: tally };
  }
  return { terms, grantId, approvals: tally };
}

/** The stored decision: its conditional update (not awaited yet), the approval as it stores it, and the events to append. */
type TRecorded = { decided: PromiseLike<Array<{ id: string }>>; won: TApprovalRow; events: TNewEvent[] };

/**
 * Records the decision: the conditional update of the approval (a plain decision is a statement
 * built once; one with an edit, a reply or a grant is sent when first awaited, after the grant's
 * insert), its events and the grant it creates.
 */
async function recordDecision(plan: TPlan, { tx, announce }: TTx, found: TFound, chosen: TChosen): Promise<TRecorded> {
  const { deps, input, edit, reply } = plan;
  const { approval } = found;
  const { terms, grantId } = chosen;
  const decision = { id: approval.id, status: input.decision === "approve" ? ("approved" as const) : ("denied" as const), by: plan.actor.userId, via: input.via, at: deps.now(), bindingHash: approval.bindingHash };
  const edited = edit ? editedColumns(approval, edit) : {};
  const decided =
    !edit && reply === null && !grantId
      ? settlePendingApproval(tx, decision)
      : settlePendingApprovalWith(tx, decision, { ...edited, ...(reply !== null ? { replyMessage: reply } : {}), ...(grantId ? { grantId } : {}) });
  // The decided approval as the update above stores it (the row is locked: nothing else changes it).
  const won: TApprovalRow = { ...approval, ...edited };
  announce({ k: "inbox", change: { kind: "approval", responseId: approval.responseId, id: approval.id } });
  const data: Record<string, unknown> = { approvalId: approval.id, decision: input.decision };
  if (reply !== null) data.message = reply;
  if (edit) data.edited = { originalArguments: approval.arguments, arguments: edit.arguments, bindingHash: edit.bindingHash };
  const events: TNewEvent[] = [{ type: "approval.resolved", data, frame: true, ...whoOf(plan) }];
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
      createdBy: plan.actor.userId,
      createdVia: input.via,
    });
    events.push({ type: "grant.created", data: { grantId, approvalId: approval.id, scope: terms.scope, expiresAt: terms.expiresAt?.toISOString() ?? null, action: approval.action }, frame: false, ...whoOf(plan) });
  }
  return { decided, won, events };
}

/**
 * Ends the run (an external approval, whose caller runs the operation; a denial) once the update
 * won, or resumes it and claims it for this host, the update and the resume sent as one batch.
 */
async function endOrResume(plan: TPlan, t: TTx, found: TFound, chosen: TChosen, { decided, won, events }: TRecorded): Promise<TSettled | null> {
  const { deps, input, reply } = plan;
  const { approval } = found;
  const settled = { found, won, grantId: chosen.grantId, approvals: chosen.approvals };
  if (approval.external || !plan.continues) {
    // The conditional update must have won before the run is ended (under the lock it always does).
    const [row] = await decided;
    if (!row) return null;
    // Nothing runs here for an external approval: the record completes (approved) or is denied; the caller consumes the approval and runs it.
    const continues = approval.external && input.decision === "approve";
    const run = await lockWaitingOn(t.tx, approval.responseId, approval.id);
    if (!run) throw refused("conflict", { code: "notWaiting" });
    const [frame] = await t.emit(run.id, events);
    await endWaitingRun(deps, t.tx, t.emit, t.announce, run, continues ? "completed" : "denied");
    return { ...settled, sequence: frame?.sequence ?? 0, claimed: null, continues };
  }
  const pending = { type: "approval" as const, id: approval.id, callId: approval.callId };
  const settlement: TSettlement = reply !== null ? { type: "approval", reply } : { type: "approval", approved: approvedOperationOf(won) };
  // The decision and the resume go to the database as one batch; a lost update rolls the resume back.
  const [update, resume] = await Promise.allSettled([decided, resumeWith(deps, deps.host, t.tx, t.emit, approval.responseId, { pending, settlement, events, runsTool: reply === null })]);
  if (settledValue(update).length === 0) throw new LostDecision();
  const resumed = settledValue(resume);
  return { ...settled, sequence: resumed.sequence, claimed: resumed.run, continues: true };
}

/** Observes a settled decision: the approval's wait, from its request to this decision (it may have outlived the process that asked), and the decision's metrics. */
function reportSettled(plan: TPlan, approval: TApprovalRow, decision: ReturnType<typeof startSpan>): void {
  const { deps, input } = plan;
  const waitedMs = deps.now().getTime() - approval.createdAt.getTime();
  const wait = startSpan(deps.observe.tracer, SPAN.approvalWait, decision.context, { "countersign.approval_id": approval.id, "countersign.response_id": approval.responseId, "countersign.risk": approval.risk }, { startTime: approval.createdAt });
  endOnce(wait.span, outcomeOf(input));
  decision.span.setAttribute("countersign.response_id", approval.responseId);
  deps.observe.metrics.decided({ outcome: outcomeOf(input), channel: input.via, waitedMs });
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
