import type { TActor } from "./actor";
import type { TApprovers } from "./agent-policy";
import { DECIDER_ROLES, type TRisk } from "./vocabulary";

/**
 * Who may decide an approval of a run they started themselves: `never` nobody, `operators`
 * operators and admins (members need another person), `always` anyone who may decide at all.
 */
export const SELF_APPROVAL_POLICIES = ["never", "operators", "always"] as const;
export type TSelfApproval = (typeof SELF_APPROVAL_POLICIES)[number];

/** The default when an agent does not say: members never approve their own runs. */
export const DEFAULT_SELF_APPROVAL: TSelfApproval = "operators";

/** Distinct approvers needed per risk (only `high` today); the requester is never one of them. */
export type TQuorum = { high?: number };

/** What an agent says about separation of duties, as the decision rule needs it. */
export type TDecisionPolicy = { agent: string; selfApproval: TSelfApproval; approvers?: TApprovers };

/** Whether the agent's approver list (when it has one) names the actor by role or email. */
const isListedApprover = (actor: TActor, approvers: TApprovers | undefined): boolean =>
  !approvers || Boolean(approvers.roles?.includes(actor.role)) || Boolean(actor.email && approvers.users?.some((e) => e.toLowerCase() === actor.email?.toLowerCase()));

/** The parts of an approval the rule looks at: whose run it is and how many approvers it needs. */
export type TDecidable = { userId: string; requiredApprovals: number };

/**
 * How many distinct approvers an approval of this risk needs under the agent's quorum (at least 1).
 * A fractional quorum rounds up: a misconfiguration must not need fewer people than written.
 */
export function requiredApprovalsFor(quorum: TQuorum | undefined, risk: TRisk): number {
  const wanted = risk === "high" ? Math.ceil(quorum?.high ?? 1) : 1;
  return Number.isFinite(wanted) && wanted > 1 ? wanted : 1;
}

/**
 * The one rule for who may decide (approve, deny or reply to) an approval, on every transport.
 * Returns null when `actor` may decide it, else the sentence that says why not. Reading is
 * checked before (others' objects stay 404 for members); this only answers "may decide".
 */
export function decisionRefusal(actor: TActor, approval: TDecidable, policy: TDecisionPolicy): string | null {
  if (actor.role === "auditor") return "Your role cannot decide approvals.";
  const isDecider = DECIDER_ROLES.includes(actor.role);
  // An agent with an approver list accepts decisions only from the people it names.
  if (!isListedApprover(actor, policy.approvers)) return `The agent "${policy.agent}" accepts decisions only from its approvers; you are not one of them.`;
  if (actor.userId !== approval.userId) return isDecider ? null : "Your role cannot decide approvals of other people's runs.";
  // The requester never counts toward a quorum, whatever the agent allows for single approvals.
  if (approval.requiredApprovals > 1) {
    return `You started this run; this approval needs ${approval.requiredApprovals} approvals from other people, and its requester never counts.`;
  }
  const selfAllowed = policy.selfApproval === "always" || (policy.selfApproval === "operators" && isDecider);
  return selfAllowed ? null : `You started this run; the agent "${policy.agent}" requires another person to approve it.`;
}
