import { z } from "zod";
import { ZDecisionBody } from "../../../core/decision";
import { readScope } from "../../../core/read-scope";
import { decideApproval } from "../../../services/decide-approval";
import { consumeExternalApproval, getExternalApproval, requestExternalApproval, ZExternalApproval, ZExternalApprovalBody } from "../../../services/external-approvals";
import { listApprovals } from "../../../services/read/approvals";
import { waitForBoundary } from "../../../services/wait-for-boundary";
import { sendJson } from "../../shared/respond";
import { parseListStatus, parseWait, ZApprovalList, ZConsumeBody } from "../external-approvals";
import { defineRoute, jsonBody, type TAuthedCtx } from "../route";
import { ZDecided, ZVoted } from "../v1-schemas";

/*
 * Approvals: the external ones a caller asks for (bring your own agent: request, wait, consume)
 * and the decisions on any approval, hosted runs' included.
 */

/** Asks for approval of an operation the caller runs itself; the same idempotency key answers the same approval (200). */
async function requestApproval({ deps, res, actor, body }: TAuthedCtx<never, typeof ZExternalApprovalBody>): Promise<void> {
  const { approval, replayed } = await requestExternalApproval(deps, actor, body);
  sendJson(res, replayed ? 200 : 201, approval satisfies z.input<typeof ZExternalApproval>);
}

export const requestApprovalRoute = defineRoute({
  method: "POST",
  path: "/v1/approvals",
  auth: true,
  body: jsonBody(ZExternalApprovalBody),
  docs: {
    operationId: "requestApproval",
    summary: "Ask for approval of an operation the caller runs itself (bring your own agent)",
    description:
      "The agent's policy, the exec reviewer, standing grants, quorum and notifications apply as for hosted runs; the status may already be `approved` (a grant, a `never` policy) or `denied` (the reviewer). An unknown action or arguments its tool refuses are 422; arguments over 64 KiB are 413. The same `idempotencyKey` (per caller) answers 200 with the same approval.",
    responses: {
      201: { description: "Created: the approval as `GET /v1/approvals/{id}` shows it", json: ZExternalApproval },
      200: { description: "The approval this idempotency key already names, as it is now (after an approver's edit: `edited: true`, the edited `arguments` and their `bindingHash`)", json: ZExternalApproval },
    },
    errors: [403, 404, 409, 422],
  },
  handle: requestApproval,
});

/** The approvals the caller may see, pending (default) or decided, newest first. */
async function listCallerApprovals({ deps, res, url, actor }: TAuthedCtx): Promise<void> {
  const status = parseListStatus(url.searchParams.get("status"));
  sendJson(res, 200, { approvals: await listApprovals(deps, readScope(actor), { status }) } satisfies z.input<typeof ZApprovalList>);
}

export const listApprovalsRoute = defineRoute({
  method: "GET",
  path: "/v1/approvals",
  auth: true,
  docs: {
    operationId: "listApprovals",
    summary: "Approvals the caller may see (operators, admins, auditors: all; members: their own), newest first",
    params: [{ in: "query", name: "status", schema: z.enum(["pending", "decided"]), description: "`pending` (default) or `decided`" }],
    responses: { 200: { description: "At most 200 approvals", json: ZApprovalList } },
    errors: [400],
  },
  handle: listCallerApprovals,
});

/** An approval's status; `?wait=MS` long-polls while it is pending. */
async function getApproval({ deps, res, url, params, actor }: TAuthedCtx<"id">): Promise<void> {
  const waitMs = parseWait(url.searchParams.get("wait"));
  sendJson(res, 200, (await getExternalApproval(deps, actor, params.id, waitMs)) satisfies z.input<typeof ZExternalApproval>);
}

export const getApprovalRoute = defineRoute({
  method: "GET",
  path: "/v1/approvals/{id}",
  auth: true,
  docs: {
    operationId: "getApproval",
    summary: "An approval's status; with `wait`, long-polls while it is pending",
    params: [{ in: "query", name: "wait", schema: z.string().regex(/^\d+$/), description: "Wait up to this many ms for a decision (bounded by COUNTERSIGN_BOUNDARY_TIMEOUT_MS; past it, the current status)" }],
    responses: { 200: { description: "The approval: status, the arguments to run (edited when an approver changed them), a reply message", json: ZExternalApproval } },
    errors: [400, 404],
  },
  handle: getApproval,
});

/** Uses an approved external approval once, for exactly the operation it approved (`bindingHash`). */
async function consumeApproval({ deps, res, params, actor, body }: TAuthedCtx<"id", typeof ZConsumeBody>): Promise<void> {
  sendJson(res, 200, (await consumeExternalApproval(deps, actor, params.id, body.bindingHash)) satisfies z.input<typeof ZExternalApproval>);
}

export const consumeApprovalRoute = defineRoute({
  method: "POST",
  path: "/v1/approvals/{id}/consume",
  auth: true,
  body: jsonBody(ZConsumeBody),
  docs: {
    operationId: "consumeApproval",
    summary: "Use an approved external approval once, right before running the operation",
    description:
      "`bindingHash` must be the approved operation's (from the create answer, or from GET after an edit). 200 exactly once; 409 `already_consumed`, `binding_changed` (a different hash), `expired`, `not_approved` (pending, denied, cancelled) or `conflict` (a hosted run's approval).",
    responses: { 200: { description: "Consumed: run the operation now", json: ZExternalApproval } },
    errors: [403, 404, 409],
  },
  handle: consumeApproval,
});

/** Approves (as asked, edited, with a standing grant), denies or replies; one vote of a quorum is a 202. */
async function decide({ deps, res, params, actor, body }: TAuthedCtx<"id", typeof ZDecisionBody>): Promise<void> {
  const decided = await decideApproval(deps, actor, { ...body, approvalId: params.id, via: "http" });
  if (!decided.settled) {
    // One vote of a quorum: recorded, the run keeps waiting for the other approvers.
    sendJson(res, 202, { id: decided.approvalId, status: "pending", approvals: decided.approvals, requiredApprovals: decided.requiredApprovals } satisfies z.input<typeof ZVoted>);
    return;
  }
  if (!decided.continues) {
    sendJson(res, 200, { id: decided.approvalId, status: "denied" } satisfies z.input<typeof ZDecided>);
    return;
  }
  // Approve (as asked or edited) and reply-instead both resume the run: answer with its next boundary.
  const envelope = await waitForBoundary(deps, decided.responseId, decided.resolvedSequence);
  sendJson(res, 200, { ...envelope, approvalId: decided.approvalId, ...(decided.grantId ? { grantId: decided.grantId } : {}) } satisfies z.input<typeof ZDecided>);
}

export const decideApprovalRoute = defineRoute({
  method: "POST",
  path: "/v1/approvals/{id}",
  auth: true,
  body: jsonBody(ZDecisionBody),
  docs: {
    operationId: "decideApproval",
    summary: "Approve (as asked, edited, with a standing grant) or deny (or reply instead)",
    responses: { 200: { description: "The decision settled the approval", json: ZDecided }, 202: { description: "One vote of a quorum, recorded; the run keeps waiting", json: ZVoted } },
    errors: [403, 404, 409, 422, 504],
  },
  handle: decide,
});
