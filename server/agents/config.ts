import { z } from "zod";
import type { TAgentEndPayload } from "../host/attempt-lifecycle";
import { mcpServersFromEnv, type TMcpServersSource } from "../mcp/config";
import { nodeInvokeTool } from "../devices/node-invoke-tool";
import { collectCardDetailsTool, getPageContextTool } from "../tools/client-tools";
import { echoTool, execTool } from "../tools/host-tools";
import { askUserTool, confirmUrlTool, requestInputTool, requestSecretTool } from "../tools/question-tools";
import type { TTool } from "../tools/types";
import type { TModelEndpoint } from "../harnesses/openai-compatible";
import { DEFAULT_SELF_APPROVAL, type TDecisionPolicy, type TQuorum, type TSelfApproval } from "../core/separation-of-duties";
import { modelAgentFromEnv } from "./model-agent";

/** `always`: a person decides; `never`: runs without a prompt; `review`: the exec reviewer decides first. */
export const APPROVAL_POLICIES = ["always", "never", "review"] as const;

export type TAgentConfig = {
  name: string;
  /** `scripted` plays `input.script`; `openai-compatible` asks `model` at `endpoint` (server/harnesses/openai-compatible.ts). */
  harness: "scripted" | "openai-compatible";
  /** The model id sent to the endpoint. */
  model: string;
  /** Where an `openai-compatible` agent's model lives: base URL, API key variable, headers, timeouts. */
  endpoint?: TModelEndpoint;
  /** The system prompt of an `openai-compatible` agent. */
  system?: string;
  description: string;
  tools: TTool[];
  /** Tool name → who decides; tools not listed never need approval. */
  approval: Record<string, (typeof APPROVAL_POLICIES)[number]>;
  approvalTtlMs: number;
  clientToolTtlMs: number;
  maxTurns: number;
  /** Active execution time of one attempt before it is cancelled with reason `timeout` (default 30 min). */
  executionTimeoutMs?: number;
  /** How long finalization may take once settlement begins (default 30 s). */
  settlementTimeoutMs?: number;
  /** Tried once when a finished turn has no visible text (empty, reasoning-only or planning-only). */
  fallbackModel?: string;
  /** agent_end hooks, started after the response is finalized; their failures never change it. */
  onAgentEnd?: Array<(payload: TAgentEndPayload) => unknown>;
  /**
   * The exact node commands this harness runs on paired devices. Each attempt copies the list when
   * it is created; a Full access session may run only these without a prompt. It narrows, never grants.
   */
  requiredNodeCommands?: string[];
  /**
   * MCP servers (stdio or Streamable HTTP) whose tools the agent may call as `mcp_<server>_<tool>`
   * (action `mcp:<server>.<tool>`; policy by action, the server's `approval`, or a pattern such as
   * `mcp:*`; an unnamed MCP tool needs a person). See server/mcp.
   */
  mcpServers?: TMcpServersSource;
  /**
   * Standing grants an approver may give when approving (off unless set): `session` allows the
   * exact operation for the rest of the session, `maxDays` allows it for up to that many days.
   */
  grants?: { session?: boolean; maxDays?: number };
  /**
   * Whether the exec reviewer re-reviews arguments an approver edited before the edit is accepted.
   * Default: when the tool's policy is `review`.
   */
  reviewEdits?: boolean;
  /**
   * What approved commands (`exec`) may use beyond the sandbox's minimum: `network` (default off;
   * only the bubblewrap sandbox can take it away) and `env`, names of server environment variables
   * passed through by name (nothing else of the server's environment reaches a command).
   */
  exec?: { network?: boolean; env?: string[] };
  /**
   * Whether the person who started a run may decide its approvals (default `operators`): `never`,
   * `operators` (operators and admins may, members need someone else) or `always`.
   */
  selfApproval?: TSelfApproval;
  /** Distinct approvers a high-risk approval needs (e.g. `{ high: 2 }`); the requester never counts. */
  quorum?: TQuorum;
};

/** What every scripted agent shares: the deterministic model, its tools and expiry times. */
const SCRIPTED_TOOLS = [execTool, echoTool, getPageContextTool, collectCardDetailsTool, askUserTool, requestSecretTool, requestInputTool, confirmUrlTool];
const SCRIPTED = { harness: "scripted", model: "scripted", approvalTtlMs: 15 * 60_000, clientToolTtlMs: 5 * 60_000, maxTurns: 64 } as const;

/** The agents this installation serves; the first is the default. */
export const AGENTS: readonly TAgentConfig[] = [
  {
    name: "scripted",
    ...SCRIPTED,
    description: "A deterministic model that plays the script given as input; for demos, tests and benchmarks.",
    tools: SCRIPTED_TOOLS,
    approval: { exec: "always", echo: "never" },
    fallbackModel: "scripted-fallback",
    // The demo and test agent lets approvers give standing grants; other agents keep them off.
    grants: { session: true, maxDays: 30 },
  },
  {
    name: "scripted-reviewed",
    ...SCRIPTED,
    description: "The scripted agent with its exec calls reviewed by the configured exec reviewer first.",
    tools: SCRIPTED_TOOLS,
    approval: { exec: "review", echo: "never" },
  },
  {
    name: "scripted-device",
    ...SCRIPTED,
    description: "The scripted agent with node_invoke on paired devices; it declares the node command uptime.",
    tools: [...SCRIPTED_TOOLS, nodeInvokeTool],
    approval: { exec: "always", echo: "never" },
    fallbackModel: "scripted-fallback",
    requiredNodeCommands: ["uptime"],
  },
  {
    name: "scripted-mcp",
    ...SCRIPTED,
    description: "The scripted agent with the tools of the MCP servers configured in COUNTERSIGN_MCP_SERVERS (a JSON array).",
    tools: SCRIPTED_TOOLS,
    approval: { exec: "always", echo: "never" },
    mcpServers: () => mcpServersFromEnv(),
  },
];

export const DEFAULT_AGENT = "scripted";

/** `model` when COUNTERSIGN_MODEL_BASE_URL is set (server/agents/model-agent.ts); read once at start. */
const ENV_AGENTS: readonly TAgentConfig[] = [modelAgentFromEnv()].filter((a): a is TAgentConfig => a !== null);

/** Agents added at run time (tests, embedders) by `registerAgent`. */
const registered = new Map<string, TAgentConfig>();

/** Adds an agent to this process; returns the function that removes it again. Names are unique. */
export function registerAgent(agent: TAgentConfig): () => void {
  if (findAgent(agent.name)) throw new Error(`An agent named ${agent.name} is already configured.`);
  registered.set(agent.name, agent);
  return () => {
    if (registered.get(agent.name) === agent) registered.delete(agent.name);
  };
}

/** Looks up an agent by name. */
export const findAgent = (name: string): TAgentConfig | undefined =>
  AGENTS.find((a) => a.name === name) ?? ENV_AGENTS.find((a) => a.name === name) ?? registered.get(name);

/** The separation-of-duties policy of an agent by name (the defaults for one no longer configured). */
export const decisionPolicyOf = (name: string): TDecisionPolicy => ({ agent: name, selfApproval: findAgent(name)?.selfApproval ?? DEFAULT_SELF_APPROVAL });

export const ZAgentName = z.string().min(1).max(64);
