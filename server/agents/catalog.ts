import { nodeInvokeTool } from "../devices/node-invoke-tool";
import { mcpServersFromEnv } from "../mcp/config";
import { collectCardDetailsTool, getPageContextTool } from "../tools/client-tools";
import { echoTool, execTool } from "../tools/host-tools";
import { askUserTool, confirmUrlTool, requestInputTool, requestSecretTool } from "../tools/question-tools";
import { modelAgentFromEnv } from "./model-agent";
import type { TTool } from "../tools/types";
import type { TAgentConfig } from "./types";

/** What every scripted agent shares: the deterministic model, its tools and expiry times. */
const SCRIPTED_TOOLS = [execTool, echoTool, getPageContextTool, collectCardDetailsTool, askUserTool, requestSecretTool, requestInputTool, confirmUrlTool];
/** The host's tools an agent a plugin registers may name: the scripted agents' tools and `node_invoke` (paired devices). */
export const HOST_TOOL_CATALOG: readonly TTool[] = [...SCRIPTED_TOOLS, nodeInvokeTool];
const SCRIPTED = { harness: "scripted", model: "scripted", approvalTtlMs: 15 * 60_000, clientToolTtlMs: 5 * 60_000, maxTurns: 64 } as const;

/** The agents this installation serves; the first is the default. */
export const BUILTIN_AGENTS: readonly TAgentConfig[] = [
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
    // Bound to the server's environment by configuredAgents (COUNTERSIGN_MCP_SERVERS, read when first needed).
    mcpServers: () => [],
  },
];

export const DEFAULT_AGENT = "scripted";

/**
 * The agents of this installation in the environment `env`: the built-in ones (`scripted-mcp`
 * with the servers of COUNTERSIGN_MCP_SERVERS, read when it first needs them), and `model` when
 * COUNTERSIGN_MODEL_BASE_URL is set (read at boot).
 */
export function configuredAgents(env: Readonly<Record<string, string | undefined>>): TAgentConfig[] {
  const model = modelAgentFromEnv(env);
  const builtins = BUILTIN_AGENTS.map((a) => (a.mcpServers ? { ...a, mcpServers: () => mcpServersFromEnv(env.COUNTERSIGN_MCP_SERVERS) } : a));
  return [...builtins, ...(model ? [model] : [])];
}

