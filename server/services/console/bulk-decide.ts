import { approvalsByIds } from "../../../db/repositories/inbox";
import { type TActor, canRead } from "../../core/actor";
import { DomainError } from "../../core/errors";
import { decisionRefusal } from "../../core/separation-of-duties";
import type { TRunDeps } from "../../host/deps";
import { decideApproval, type TDecision } from "../decide-approval";

export type TBulkItem = { approvalId: string; bindingHash: string };
export type TBulkOutcome = { approvalId: string; ok: boolean; decision?: TDecision; error?: string };

/**
 * Approves or denies several low- or medium-risk approvals from the console, one exactly-once
 * decision each. Nothing is decided when any item is high risk (those need a person to look at
 * each one), invisible to the caller, or not the caller's to decide (the separation-of-duties
 * rule of the one decide service, e.g. a run the caller started; the refusal names the reason).
 */
export async function decideMany(deps: TRunDeps, actor: TActor, input: { items: TBulkItem[]; decision: TDecision }): Promise<TBulkOutcome[]> {
  if (actor.role === "auditor") throw new DomainError("forbidden", "Your role cannot decide approvals.");
  const ids = [...new Set(input.items.map((i) => i.approvalId))];
  const rows = await approvalsByIds(deps.db, ids);
  const visible = rows.filter((r) => canRead(actor, r.userId));
  if (visible.length !== ids.length) throw new DomainError("not_found", "Some of these approvals were not found.");
  const refusals = visible.flatMap((r) => {
    const reason = decisionRefusal(actor, r, deps.agents.decisionPolicyOf(r.agent));
    return reason === null ? [] : [reason];
  });
  if (refusals.length > 0) {
    const which = refusals.length === 1 ? "One of these approvals is" : `${refusals.length} of these approvals are`;
    throw new DomainError("forbidden", `${which} not for you to decide, so nothing was decided: ${refusals[0]}`);
  }
  const high = visible.filter((r) => r.risk === "high");
  if (high.length > 0) {
    throw new DomainError("forbidden", `High-risk approvals cannot be decided in bulk; decide ${high.length === 1 ? "it" : `these ${high.length}`} one by one.`);
  }
  const outcomes: TBulkOutcome[] = [];
  for (const item of input.items) {
    try {
      const decided = await decideApproval(deps, actor, { approvalId: item.approvalId, decision: input.decision, via: "console", expectedBindingHash: item.bindingHash });
      outcomes.push({ approvalId: item.approvalId, ok: true, decision: decided.decision });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      outcomes.push({ approvalId: item.approvalId, ok: false, error: error.message });
    }
  }
  return outcomes;
}
