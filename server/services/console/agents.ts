import type { AgentRegistry } from "../../agents/registry";
import type { TAgentConfig } from "../../agents/types";
import { DEFAULT_SELF_APPROVAL, requiredApprovalsFor, type TSelfApproval } from "../../core/separation-of-duties";
import { approvalPolicyFor } from "../../mcp/policy";
import type { TExecReviewer } from "../../reviewer";
import type { TTool } from "../../tools/types";
import type { TToolKind, TToolPolicy } from "../../core/vocabulary";

export type TAgentView = {
  name: string;
  default: boolean;
  harness: string;
  model: string;
  fallbackModel: string | null;
  description: string;
  /** `policy` is a code of `TOOL_POLICIES` (core/vocabulary); the console names it in the viewer's language. */
  tools: Array<{ name: string; kind: TToolKind; description: string; policy: TToolPolicy }>;
  /** Tool name (or action pattern) → `always` | `never` | `review`, as configured. */
  approval: Record<string, string>;
  /** The exec reviewer that decides first for tools with policy `review` (null: every review asks a person). */
  reviewer: string | null;
  usesReviewer: boolean;
  approvalTtlMs: number;
  clientToolTtlMs: number;
  executionTimeoutMs: number | null;
  settlementTimeoutMs: number | null;
  maxTurns: number;
  requiredNodeCommands: string[];
  mcp: boolean;
  /** Who may decide approvals of their own runs (separation of duties). */
  selfApproval: TSelfApproval;
  /** Distinct approvers a high-risk approval needs (1: no quorum). */
  highRiskApprovers: number;
};

/** Who decides before a tool runs: the host tools' approval policy; the other kinds by their nature. */
function policyOf(agent: TAgentConfig, tool: TTool): TToolPolicy {
  if (tool.kind === "host") return approvalPolicyFor(agent, tool);
  if (tool.kind === "device") return "device";
  if (tool.kind === "client") return "client";
  return "person";
}

/** The agent from the environment (`model`), when configured, after the built-in ones. */

/** The configured agents and their policies, read-only, as the admin page shows them (no secrets). */
export function listAgentViews(agents: AgentRegistry, reviewer: TExecReviewer | null): TAgentView[] {
  return agents.list().map((a) => {
    const usesReviewer = Object.values(a.approval).includes("review");
    return {
      name: a.name,
      default: a.name === agents.defaultAgent,
      harness: a.harness,
      model: a.model,
      fallbackModel: a.fallbackModel ?? null,
      description: a.description,
      tools: a.tools.map((t) => ({
        name: t.name,
        kind: t.kind,
        description: t.description,
        policy: policyOf(a, t),
      })),
      approval: { ...a.approval },
      reviewer: usesReviewer ? (reviewer?.name ?? null) : null,
      usesReviewer,
      approvalTtlMs: a.approvalTtlMs,
      clientToolTtlMs: a.clientToolTtlMs,
      executionTimeoutMs: a.executionTimeoutMs ?? null,
      settlementTimeoutMs: a.settlementTimeoutMs ?? null,
      maxTurns: a.maxTurns,
      requiredNodeCommands: [...(a.requiredNodeCommands ?? [])],
      mcp: Boolean(a.mcpServers),
      selfApproval: a.selfApproval ?? DEFAULT_SELF_APPROVAL,
      highRiskApprovers: requiredApprovalsFor(a.quorum, "high"),
    };
  });
}
