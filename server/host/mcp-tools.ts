import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TRunStarter } from "./pending/contract";
import { z } from "zod";
import { recordEvents } from "./transact";
import { argsSchemaFromJson } from "../tools/arguments-json-schema";
import type { TAgentConfig } from "../agents/types";
import type { TRisk } from "../core/vocabulary";
import type { TDeps } from "./deps";
import { resolveMcpServers, type TMcpServerConfig } from "../mcp/config";
import { errorText } from "../mcp/connection";
import type { TMcpCall } from "../mcp/manager";
import { mcpAction, mcpToolName } from "../mcp/names";
import type { TMcpHostTool } from "../mcp/policy";
import { askDuringTool, secretAnswer } from "./pending/ask-during-tool";

/** What the tool lookup needs of the attempt that runs the call. */
export type TMcpAttempt = {
  agent: Pick<TAgentConfig, "name" | "mcpServers">;
  response: { id: string; sessionId: string; userId: string };
  runtime: { host: TRunStarter };
};

/**
 * Records a host event of an MCP call in the run's trajectory (not a wire frame). A failure to
 * record is logged and never changes the call.
 */
function recorder(deps: TDeps, responseId: string): (type: string, data: Record<string, unknown>) => Promise<void> {
  return async (type, data) => {
    try {
      await recordEvents(deps, responseId, [{ type, data, frame: false }]);
    } catch (error) {
      deps.log.warn({ err: error, responseId, type }, "could not record an MCP event");
    }
  };
}

/** MCP arguments are an object; a schema zod cannot read still gets that much checked here (the server checks the rest). */
const ZAnyObject = z.record(z.string(), z.unknown());

const schemas = new WeakMap<object, z.ZodType>();

/** The zod schema of an MCP tool's JSON `inputSchema` (cached per listed tool). */
function argsSchemaOf(tool: Tool): z.ZodType {
  const cached = schemas.get(tool);
  if (cached) return cached;
  // Only an object schema fits MCP arguments; anything else falls back to "an object".
  const schema = argsSchemaFromJson(tool.inputSchema) ?? ZAnyObject;
  schemas.set(tool, schema);
  return schema;
}

const riskOf = (tool: Tool): TRisk => (tool.annotations?.readOnlyHint === true ? "low" : tool.annotations?.destructiveHint === true ? "high" : "medium");

const preview = (args: unknown): string => {
  const text = JSON.stringify(args) ?? "{}";
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
};

function hostTool(deps: TDeps, attempt: TMcpAttempt, server: TMcpServerConfig, tool: Tool, callId: string): TMcpHostTool {
  return {
    kind: "host",
    name: mcpToolName(server.name, tool.name),
    description: (tool.description ?? tool.title ?? `The ${tool.name} tool of the MCP server ${server.name}.`).slice(0, 4000),
    argsSchema: argsSchemaOf(tool),
    action: mcpAction(server.name, tool.name),
    cwdOf: () => null,
    describe: (args) => `Call ${tool.name} on the MCP server ${server.name} with ${preview(args)}?`,
    risk: () => riskOf(tool),
    execute: async (args, ctx) => {
      // Questions this call asks (elicitations) hold the run; when the call ends they end too, before the attempt goes on.
      const ended = new AbortController();
      const holds = new Set<Promise<unknown>>();
      try {
        const call: TMcpCall = {
          label: `${server.name}.${tool.name}`,
          tool: tool.name,
          server: server.name,
          responseId: attempt.response.id,
          log: deps.log,
          callId,
          signal: AbortSignal.any([ctx.signal, ended.signal]),
          // Elicitations ask through the held-question protocol, as this call of this run.
          ask: (questions, options) =>
            askDuringTool(
              { deps, host: attempt.runtime.host, responseId: attempt.response.id, sessionId: attempt.response.sessionId, userId: attempt.response.userId, callId, holds, ...options },
              { questions },
            ),
          secretAnswer: (questionId, answerKey) => secretAnswer(deps, questionId, answerKey),
          deadline: Date.now() + (server.timeoutMs ?? 10 * 60_000),
          record: recorder(deps, attempt.response.id),
        };
        return await deps.mcp.callTool(server, call, (args ?? {}) as Record<string, unknown>);
      } finally {
        ended.abort();
        await Promise.allSettled([...holds]);
      }
    },
    mcp: { server: server.name, tool: tool.name, serverApproval: server.approval },
  };
}

/** A stand-in for a tool of a server that cannot be reached: it runs nothing and says why. */
function unavailableTool(server: TMcpServerConfig, name: string, reason: string): TMcpHostTool {
  const toolName = name.slice(`mcp_${server.name}_`.length) || name;
  return {
    kind: "host",
    name,
    description: `Unavailable tool of the MCP server ${server.name}.`,
    argsSchema: z.unknown(),
    action: mcpAction(server.name, toolName),
    cwdOf: () => null,
    describe: () => `The MCP server ${server.name} is unavailable.`,
    risk: () => "low",
    execute: async () => ({ error: `The MCP server ${server.name} is unavailable (${reason}); ${toolName} was not run.` }),
    mcp: { server: server.name, tool: toolName, unavailable: true },
  };
}

/**
 * Finds the MCP tool an agent calls by name (`mcp_<server>_<tool>`), connecting to the agent's
 * MCP servers lazily. Undefined when no configured server offers it.
 */
export async function findMcpTool(deps: TDeps, attempt: TMcpAttempt, call: { id: string; name: string }): Promise<TMcpHostTool | undefined> {
  if (!call.name.startsWith("mcp_") || !attempt.agent.mcpServers) return undefined;
  let servers: readonly TMcpServerConfig[];
  try {
    servers = resolveMcpServers(attempt.agent.mcpServers);
  } catch (error) {
    deps.log.warn({ err: error, agent: attempt.agent.name }, "MCP servers are misconfigured");
    return undefined;
  }
  const manager = deps.mcp;
  for (const server of servers) {
    if (!call.name.startsWith(`mcp_${server.name}_`)) continue;
    let tools: Tool[];
    try {
      tools = await manager.listTools(server);
    } catch (error) {
      await recorder(deps, attempt.response.id)("mcp.unavailable", { callId: call.id, server: server.name, reason: errorText(error) });
      return unavailableTool(server, call.name, errorText(error));
    }
    const tool = tools.find((t) => mcpToolName(server.name, t.name) === call.name);
    if (tool) return hostTool(deps, attempt, server, tool, call.id);
  }
  return undefined;
}

/**
 * Every MCP tool an agent can call right now (for harnesses that hand tool definitions to a
 * model): name, description and JSON input schema. Servers that cannot be reached are skipped.
 */
export async function listMcpTools(deps: TDeps, agent: Pick<TAgentConfig, "mcpServers">): Promise<Array<{ name: string; description: string; inputSchema: unknown; action: string }>> {
  const out: Array<{ name: string; description: string; inputSchema: unknown; action: string }> = [];
  for (const server of resolveMcpServers(agent.mcpServers)) {
    const tools = await deps.mcp
      .listTools(server)
      .catch(() => [] as Tool[]);
    for (const t of tools) out.push({ name: mcpToolName(server.name, t.name), description: t.description ?? t.title ?? t.name, inputSchema: t.inputSchema, action: mcpAction(server.name, t.name) });
  }
  return out;
}
