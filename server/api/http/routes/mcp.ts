import { z } from "zod";
import { DomainError } from "../../../core/errors";
import { handleMcp } from "../mcp-face";
import { defineRoute, requireApiKey, type TAuthedCtx } from "../route";

/** A JSON-RPC 2.0 message (or a batch) of the MCP face. */
const ZMcpMessage = z.union([z.looseObject({ jsonrpc: z.literal("2.0") }), z.array(z.looseObject({ jsonrpc: z.literal("2.0") }))]);

/** Countersign as a stateless MCP server; `?agent=` names the agent whose policy applies. */
async function serveMcp({ deps, req, res, url, actor }: TAuthedCtx): Promise<void> {
  const agent = url.searchParams.get("agent");
  if (agent !== null && !deps.agents.find(agent)) throw new DomainError("invalid_request", `agent: no agent named ${agent.slice(0, 64)} is configured.`);
  await handleMcp(deps, req, res, actor, agent ?? undefined);
}

export const mcpRoute = defineRoute({
  method: "POST",
  path: "/v1/mcp",
  auth: true,
  use: [requireApiKey("/v1/mcp")],
  docs: {
    operationId: "mcp",
    summary: "Countersign as an MCP server (Streamable HTTP, stateless): request_approval, ask_user, approval_prompt",
    description:
      "JSON-RPC 2.0 messages of the Model Context Protocol, answered as JSON (`Accept: application/json, text/event-stream`). Authenticated with an API key (`Authorization: Bearer`); a console cookie is refused. `?agent=NAME` names the agent whose policy applies (default: the installation's default agent). Tools: `request_approval` {action, arguments, message?, risk?, agent?, timeoutSeconds?} (an external approval, waited for and consumed when approved), `ask_user` {question, options?, header?, timeoutSeconds?}, `approval_prompt` {tool_name, input} (a coding agent's permission prompt: the action `coding:<tool_name>`) → `{\"behavior\":\"allow\",\"updatedInput\"}` (exactly the approved input) or `{\"behavior\":\"deny\",\"message\"}`.",
    params: [{ in: "query", name: "agent", schema: z.string().min(1).max(64), description: "The agent whose policy applies to every tool call of this request" }],
    // Read and answered by the MCP SDK's transport itself.
    body: ZMcpMessage,
    responses: { 200: { description: "The JSON-RPC answer", json: ZMcpMessage }, 202: { description: "A notification or response was accepted" } },
  },
  handle: serveMcp,
});
