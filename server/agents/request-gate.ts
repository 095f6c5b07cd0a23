import type { TApprovalPolicy } from "../core/agent-policy";
import type { TRisk } from "../core/vocabulary";
import { gateFor } from "../mcp/policy";
import type { THostTool } from "../tools/types";
import { actionGate, actionPolicyFor } from "./actions";
import type { TAgentConfig } from "./types";

/** The host tool an action names (by tool name or action), if the agent has it: it keeps its own policy. */
export function hostToolFor(agent: Pick<TAgentConfig, "tools">, action: string): THostTool | null {
  const tool = agent.tools.find((t) => t.kind === "host" && (t.name === action || t.action === action));
  return tool?.kind === "host" ? tool : null;
}

/** A request as recorded: a hosted run's tool call, or an external approval's action. */
export type TRecordedRequest = { external: boolean; toolName: string; action: string; arguments: unknown };

/**
 * Who an agent's policy says decides a recorded request, and the risk a predicate fixes: a hosted
 * call by its tool's entry and predicates (as `passGate`), an external request by its host tool
 * or else its action's entry (as `POST /v1/approvals`). Null: the agent has no such tool now, or
 * refuses the undeclared action.
 */
export function requestGate(agent: TAgentConfig, request: TRecordedRequest): { policy: TApprovalPolicy; fixedRisk?: TRisk } | null {
  const tool = request.external ? hostToolFor(agent, request.action) : hostToolFor(agent, request.toolName);
  if (tool) return gateFor(agent, tool, request.arguments);
  if (!request.external) return null;
  const declared = actionPolicyFor(agent, request.action);
  return declared ? actionGate(declared, request.arguments) : null;
}

/**
 * The agent as its shadow policy would have it (docs/analytics.md#shadow-rules): the shadow's
 * entries replace the live ones; null when it has none. The live gate code evaluates it.
 */
export function shadowAgentOf(agent: TAgentConfig): TAgentConfig | null {
  const shadow = agent.shadow;
  if (!shadow) return null;
  return {
    ...agent,
    approval: { ...agent.approval, ...shadow.approval },
    predicates: { ...agent.predicates, ...shadow.predicates },
    ...(shadow.actions ? { actions: { ...agent.actions, ...shadow.actions } } : {}),
  };
}

/** What the shadow would decide for a call of `tool` where it differs from `live` (null: no shadow, or the same). */
export function shadowOfCall(agent: TAgentConfig, tool: THostTool, args: unknown, live: TApprovalPolicy): TApprovalPolicy | null {
  const shadowAgent = shadowAgentOf(agent);
  if (!shadowAgent) return null;
  const { policy } = gateFor(shadowAgent, tool, args);
  return policy !== live ? policy : null;
}

/** The trajectory event of a request the shadow policy would have decided differently. */
export const shadowEvent = (data: { callId: string; toolName: string; action: string; live: string; shadow: string }) => ({
  type: "approval.shadow",
  data: { ...data, wouldAutoApprove: data.shadow === "never" },
  frame: false,
});
