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
export function requestGate(agent: TAgentConfig, request: TRecordedRequest): { policy: TApprovalPolicy | "ask"; fixedRisk?: TRisk } | null {
  const tool = request.external ? hostToolFor(agent, request.action) : hostToolFor(agent, request.toolName);
  if (tool) return gateFor(agent, tool, request.arguments);
  if (!request.external) return null;
  const declared = actionPolicyFor(agent, request.action);
  return declared ? actionGate(declared, request.arguments) : null;
}
