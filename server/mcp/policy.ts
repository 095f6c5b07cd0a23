import { evaluatePredicates, type TAgentPolicy } from "../core/agent-policy";
import type { TRisk } from "../core/vocabulary";
import type { THostTool } from "../tools/types";
import type { TMcpPolicy } from "./config";
import { globMatches } from "./names";

/** What an MCP-backed host tool carries besides the host-tool contract. */
export type TMcpToolInfo = {
  server: string;
  /** The tool's name on its MCP server. */
  tool: string;
  /** The server config's own per-tool policies. */
  serverApproval?: Record<string, TMcpPolicy>;
  /** Set when the server could not be reached: the tool only reports that, it runs nothing. */
  unavailable?: boolean;
};

export type TMcpHostTool = THostTool & { mcp: TMcpToolInfo };

export const isMcpTool = (tool: THostTool): tool is TMcpHostTool => "mcp" in tool && typeof (tool as { mcp?: unknown }).mcp === "object";

const own = (record: Record<string, TMcpPolicy> | undefined, key: string): TMcpPolicy | undefined =>
  record && Object.hasOwn(record, key) ? record[key] : undefined;

/** The most specific wildcard entry (`mcp:*`, `mcp:fixture.*`, ...) matching the action. */
function patternPolicy(approval: Record<string, TMcpPolicy>, action: string): TMcpPolicy | undefined {
  const patterns = Object.keys(approval)
    .filter((key) => key.includes("*") && globMatches(key, action))
    .sort((a, b) => b.replace(/\*/g, "").length - a.replace(/\*/g, "").length);
  return patterns[0] === undefined ? undefined : approval[patterns[0]];
}

/**
 * Who decides before a host tool runs. The agent's entry for the tool name or its action wins
 * (`exec`, `mcp:fixture.write_note`); then, for MCP tools, the server config's entry for the tool;
 * then the agent's wildcard patterns (`mcp:*`); then the server's `*`. An unnamed MCP tool needs a
 * person (`always`); other unnamed tools run without a prompt, as before.
 */
export function approvalPolicyFor(agent: Pick<TAgentPolicy, "approval">, tool: THostTool): TMcpPolicy {
  const approval = agent.approval as Record<string, TMcpPolicy>;
  const exact = own(approval, tool.name) ?? own(approval, tool.action);
  if (!isMcpTool(tool)) return exact ?? patternPolicy(approval, tool.action) ?? "never";
  // A tool of an unreachable server runs nothing (it only reports the failure): no one is asked.
  if (tool.mcp.unavailable) return "never";
  return exact ?? own(tool.mcp.serverApproval, tool.mcp.tool) ?? patternPolicy(approval, tool.action) ?? own(tool.mcp.serverApproval, "*") ?? "always";
}

/**
 * The gate before one call of a host tool, the same for a hosted run and an external approval:
 * the agent's policy, unless the first of its argument predicates that sets an approval says
 * otherwise (`always` or `never`), and the risk a matching predicate fixes (the operator's word,
 * which wins over the reviewer's estimate).
 */
export function gateFor(agent: Pick<TAgentPolicy, "approval" | "predicates">, tool: THostTool, args: unknown): { policy: TMcpPolicy; fixedRisk?: TRisk } {
  const predicate = evaluatePredicates(agent, tool.name, args);
  return { policy: predicate.approval ?? approvalPolicyFor(agent, tool), ...(predicate.risk ? { fixedRisk: predicate.risk } : {}) };
}

/** The kinds of standing grant the agent allows now (turning one off stops the existing ones too). */
export function grantScopesOf(agent: Pick<TAgentPolicy, "grants">): Array<"session" | "days"> {
  return [...(agent.grants?.session ? (["session"] as const) : []), ...(agent.grants?.maxDays ? (["days"] as const) : [])];
}
