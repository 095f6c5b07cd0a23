import type { TAgentPolicy } from "../core/agent-policy";
import type { TDecisionPolicy } from "../core/separation-of-duties";

/**
 * Who may decide an agent's approvals (self-approval, approvers), from the policy its run started
 * with or else the agent's current configuration (types only; server/agents/registry.ts
 * implements it). The notifier asks it before it offers a person a link to decide.
 */
export type TDecisionPolicies = { decisionPolicyOf(name: string, policy?: TAgentPolicy | null): TDecisionPolicy };
