/**
 * The one approval step every adapter here shares: ask Countersign for an external approval of an
 * operation, wait for a person's decision, and (when approved) consume it with its binding hash
 * right before the operation runs, so it runs once and exactly as approved (an approver's edit
 * included). The adapters only translate between an SDK's approval step and this.
 */
import type { Countersign, TApproval, TApprovalRequest } from "../../clients/ts/src/index";

export type TGateOptions = {
  /** How long to wait for a decision (default 15 minutes); still pending then counts as not approved. */
  timeoutMs?: number;
  /** The Countersign agent whose policy applies (default: the server's default agent). */
  agent?: string;
};

/** The decision: approved with the arguments to run (the approver's edit when there was one), or not. */
export type TGateDecision =
  | { approved: true; approval: TApproval; arguments: Record<string, unknown>; edited: boolean }
  | { approved: false; approval: TApproval; status: TApproval["status"]; message: string };

/** Requests an approval of `request` and waits for its decision (nothing is consumed yet). */
export async function decide(client: Countersign, request: TApprovalRequest, options: TGateOptions = {}): Promise<TGateDecision> {
  const created = await client.approvals.request({ ...(options.agent ? { agent: options.agent } : {}), ...request });
  const approval = await client.approvals.wait(created.id, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs });
  if (approval.status === "approved") return { approved: true, approval, arguments: approval.arguments as Record<string, unknown>, edited: approval.edited };
  return { approved: false, approval, status: approval.status, message: approval.message ?? defaultMessage(approval.status) };
}

/** Consumes an approved decision: once, with the binding hash of what is about to run. Throws (409) otherwise. */
export async function consume(client: Countersign, decision: Extract<TGateDecision, { approved: true }>): Promise<void> {
  await client.approvals.consume(decision.approval.id, decision.approval.bindingHash);
}

/** request → wait → consume → run; a decision other than approve returns `denied(message)` and runs nothing. */
export async function gated<T, D>(
  client: Countersign,
  request: TApprovalRequest,
  run: (args: Record<string, unknown>) => Promise<T> | T,
  denied: (message: string, decision: Extract<TGateDecision, { approved: false }>) => D,
  options: TGateOptions = {},
): Promise<T | D> {
  const decision = await decide(client, request, options);
  if (!decision.approved) return denied(decision.message, decision);
  await consume(client, decision);
  return run(decision.arguments);
}

function defaultMessage(status: TApproval["status"]): string {
  if (status === "pending") return "No one decided on this operation in time, so it did not run.";
  if (status === "expired") return "The approval expired before anyone decided, so the operation did not run.";
  if (status === "cancelled") return "The approval was cancelled, so the operation did not run.";
  return "A person denied this operation, so it did not run.";
}
