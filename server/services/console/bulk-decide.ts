import { approvalsByIds } from "../../../db/repositories/inbox";
import { type TActor, canRead } from "../../core/actor";
import type { TErrorReason } from "../../core/error-reasons";
import { DomainError, refused } from "../../core/errors";
import { decisionRefusalCode } from "../../core/separation-of-duties";
import type { TRunDeps } from "../../host/deps";
import { decideApproval, type TDecision } from "../decide-approval";

export type TBulkItem = { approvalId: string; bindingHash: string };
/** `serverText`: why an item failed, as a code the console words in the viewer's language (`error` is the English sentence). */
export type TBulkOutcome = { approvalId: string; ok: boolean; decision?: TDecision; error?: string; serverText?: TErrorReason | null };

/**
 * Approves or denies several low- or medium-risk approvals from the console, one exactly-once
 * decision each. Nothing is decided when any item is high risk (those need a person to look at
 * each one), invisible to the caller, or not the caller's to decide (the separation-of-duties
 * rule of the one decide service, e.g. a run the caller started; the refusal names the reason).
 */
export async function decideMany(deps: TRunDeps, actor: TActor, input: { items: TBulkItem[]; decision: TDecision }): Promise<TBulkOutcome[]> {
  if (actor.role === "auditor") throw refused("forbidden", { code: "auditor" });
  const ids = [...new Set(input.items.map((i) => i.approvalId))];
  const rows = await approvalsByIds(deps.db, ids);
  const visible = rows.filter((r) => canRead(actor, r.userId));
  if (visible.length !== ids.length) throw new DomainError("not_found", "Some of these approvals were not found.");
  const refusals = visible.flatMap((r) => {
    const reason = decisionRefusalCode(actor, r, deps.agents.decisionPolicyOf(r.agent, r.agentPolicy));
    return reason === null ? [] : [reason];
  });
  const [first] = refusals;
  if (first) throw refused("forbidden", { code: "bulkNotYours", params: { n: refusals.length }, refusal: first });
  const high = visible.filter((r) => r.risk === "high");
  if (high.length > 0) {
    throw refused("forbidden", { code: "bulkHighRisk", params: { n: high.length } });
  }
  const outcomes: TBulkOutcome[] = [];
  for (const item of input.items) {
    try {
      const decided = await decideApproval(deps, actor, { approvalId: item.approvalId, decision: input.decision, via: "console", expectedBindingHash: item.bindingHash });
      outcomes.push({ approvalId: item.approvalId, ok: true, decision: decided.decision });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      outcomes.push({ approvalId: item.approvalId, ok: false, error: error.message, serverText: error.serverText });
    }
  }
  return outcomes;
}
