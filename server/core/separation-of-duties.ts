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

/** Whether the agent's approver list (when it has one) names the actor by role, email or team. */
const isListedApprover = (actor: TActor, approvers: TApprovers | undefined): boolean =>
  !approvers ||
  Boolean(approvers.roles?.includes(actor.role)) ||
  Boolean(actor.email && approvers.users?.some((e) => e.toLowerCase() === actor.email?.toLowerCase())) ||
  Boolean(approvers.groups?.some((g) => actor.groups?.includes(g)));

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

/** Why someone may not decide an approval, as a code and its parameters (the console words it in the viewer's language). */
export type TDecisionRefusal =
  | { code: "auditor" }
  | { code: "othersRuns" }
  | { code: "notApprover"; params: { agent: string } }
  | { code: "notInTeam"; params: { agent: string; teams: string } }
  | { code: "ownQuorum"; params: { n: number } }
  | { code: "ownRun"; params: { agent: string } };

/** The server's own (English) sentence of each refusal: API errors, 403 bodies and logs say it. */
export function refusalSentence(refusal: TDecisionRefusal): string {
  switch (refusal.code) {
    case "auditor":
      return "Your role cannot decide approvals.";
    case "othersRuns":
      return "Your role cannot decide approvals of other people's runs.";
    case "notApprover":
      return `The agent "${refusal.params.agent}" accepts decisions only from its approvers; you are not one of them.`;
    case "notInTeam":
      return `This approval is for the team ${refusal.params.teams}: the agent "${refusal.params.agent}" accepts decisions only from its approvers, and you are not in that team.`;
    case "ownQuorum":
      return `You started this run; this approval needs ${refusal.params.n} approvals from other people, and its requester never counts.`;
    case "ownRun":
      return `You started this run; the agent "${refusal.params.agent}" requires another person to approve it.`;
  }
}

/**
 * The one rule for who may decide (approve, deny or reply to) an approval, on every transport.
 * Returns null when `actor` may decide it, else why not. Reading is checked before (others'
 * objects stay 404 for members); this only answers "may decide".
 */
export function decisionRefusalCode(actor: TActor, approval: TDecidable, policy: TDecisionPolicy): TDecisionRefusal | null {
  if (actor.role === "auditor") return { code: "auditor" };
  const isDecider = DECIDER_ROLES.includes(actor.role);
  // An agent with an approver list accepts decisions only from the people it names.
  if (!isListedApprover(actor, policy.approvers)) {
    const teams = policy.approvers?.groups ?? [];
    return teams.length > 0 ? { code: "notInTeam", params: { agent: policy.agent, teams: teams.join(", ") } } : { code: "notApprover", params: { agent: policy.agent } };
  }
  if (actor.userId !== approval.userId) return isDecider ? null : { code: "othersRuns" };
  // The requester never counts toward a quorum, whatever the agent allows for single approvals.
  if (approval.requiredApprovals > 1) return { code: "ownQuorum", params: { n: approval.requiredApprovals } };
  const selfAllowed = policy.selfApproval === "always" || (policy.selfApproval === "operators" && isDecider);
  return selfAllowed ? null : { code: "ownRun", params: { agent: policy.agent } };
}

/** {@link decisionRefusalCode} as the server's sentence (null: may decide). */
export function decisionRefusal(actor: TActor, approval: TDecidable, policy: TDecisionPolicy): string | null {
  const refusal = decisionRefusalCode(actor, approval, policy);
  return refusal ? refusalSentence(refusal) : null;
}
