import type { IncomingMessage, ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import type { TActor } from "../../core/actor";
import { ACTION_NAME, ACTION_NAME_RULE } from "../../core/actions";
import { DomainError } from "../../core/errors";
import { ZOption, ZQuestion } from "../../core/questions/schema";
import { RISKS } from "../../core/vocabulary";
import type { TRunDeps } from "../../host/deps";
import { permissionPrompt, requestAndAwait } from "../../services/external-approvals";
import { requestQuestion } from "../../services/questions/request-question";
import { waitAnswer } from "../../services/questions/wait-answer";
import { readJson } from "./body";

/**
 * `/v1/mcp`: Countersign as an MCP server (Streamable HTTP, stateless, JSON answers), for agents
 * that speak MCP: `request_approval` (an external approval, waited for and consumed), `ask_user`
 * (a Gateway question, waited for) and `approval_prompt` (a coding agent's permission-prompt tool).
 * Authenticated with an API key like every `/v1` route; each request gets its own server instance.
 */

const DEFAULT_WAIT_S = 600;
const ZWaitSeconds = z.number().int().min(1).max(3600).optional().describe(`How long to wait for a person (default ${DEFAULT_WAIT_S} s)`);

const text = (value: unknown) => ({ content: [{ type: "text" as const, text: JSON.stringify(value) }] });
const failure = (error: unknown) => {
  if (!(error instanceof DomainError)) throw error;
  return { isError: true, content: [{ type: "text" as const, text: `${error.code}: ${error.message}` }] };
};

function serverFor(deps: TRunDeps, actor: TActor, agent: string | undefined): McpServer {
  const server = new McpServer({ name: "countersign", version: "1.0.0" });
  server.registerTool(
    "request_approval",
    {
      description: "Ask a person to approve an operation before you run it yourself. Answers {status, arguments, message}: run it only when status is approved, with these arguments (an approver may have edited them).",
      inputSchema: {
        action: z.string().regex(ACTION_NAME, `action must be ${ACTION_NAME_RULE}`).describe("What you will run: any action name (send_email, deploy:prod) or a host tool of the agent (exec)"),
        arguments: z.record(z.string(), z.unknown()),
        message: z.string().min(1).max(2000).optional(),
        risk: z.enum(RISKS).optional(),
        agent: z.string().min(1).max(64).optional(),
        timeoutSeconds: ZWaitSeconds,
      },
    },
    async (args) => {
      try {
        const { timeoutSeconds, ...body } = args;
        const view = await requestAndAwait(deps, actor, { ...(agent ? { agent } : {}), ...body }, (timeoutSeconds ?? DEFAULT_WAIT_S) * 1000);
        return text({ id: view.id, status: view.status, arguments: view.arguments, edited: view.edited, ...(view.message ? { message: view.message } : {}) });
      } catch (error) {
        return failure(error);
      }
    },
  );
  server.registerTool(
    "ask_user",
    {
      description: "Ask a person one question and wait for the answer. Answers {status, answer}.",
      inputSchema: {
        // The Gateway question's own limits (one rule for every face): question, header, option label.
        question: ZQuestion.shape.question,
        options: z.array(ZOption.shape.label).min(2).max(4).optional(),
        header: ZQuestion.shape.header.optional(),
        timeoutSeconds: ZWaitSeconds,
      },
    },
    async (args) => {
      try {
        const timeoutMs = (args.timeoutSeconds ?? DEFAULT_WAIT_S) * 1000;
        const questions = [{ questionId: "answer", header: args.header ?? "Question", question: args.question, options: (args.options ?? []).map((label) => ({ label })) }];
        const { id } = await requestQuestion(deps, actor, { questions, timeoutMs: Math.max(1000, timeoutMs) }, "http");
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const left = deadline - Date.now();
          const result = await waitAnswer(deps, actor, { id, timeoutMs: Math.max(1000, left) });
          if (result.status === "answered") return text({ status: "answered", answer: result.answers.answer?.[0] ?? "" });
          if (result.status !== "pending" || Date.now() >= deadline) return text({ status: result.status });
        }
      } catch (error) {
        return failure(error);
      }
    },
  );
  server.registerTool(
    "approval_prompt",
    {
      description:
        'Permission prompt for coding agents: {tool_name, input} → {"behavior":"allow","updatedInput":…} (exactly the input a person approved, edited if they edited it) or {"behavior":"deny","message":…}. Each tool is the action coding:<tool_name> of the agent.',
      inputSchema: { tool_name: z.string().min(1).max(200), input: z.record(z.string(), z.unknown()), tool_use_id: z.string().optional() },
    },
    async (args) => {
      try {
        return text(await permissionPrompt(deps, actor, { tool_name: args.tool_name, input: args.input }, { ...(agent ? { agent } : {}), timeoutMs: DEFAULT_WAIT_S * 1000 }));
      } catch (error) {
        return failure(error);
      }
    },
  );
  return server;
}

/** One `POST /v1/mcp`: a fresh stateless server and transport answer it, then close. */
export async function handleMcp(deps: TRunDeps, req: IncomingMessage, res: ServerResponse, actor: TActor, agent?: string): Promise<void> {
  const body = await readJson(req);
  const server = serverFor(deps, actor, agent);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.once("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}
