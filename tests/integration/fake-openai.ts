import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { TAgentConfig } from "../../server/agents/types";
import { echoTool, execTool } from "../../server/tools/host-tools";

/** A chat completions request as the fake endpoint received it. */
export type TFakeRequest = {
  path: string;
  headers: IncomingHttpHeaders;
  body: {
    model: string;
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
    messages: Array<{ role: string; content?: unknown; tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>; tool_call_id?: string }>;
    tools?: Array<{ type: string; function: { name: string; description?: string; parameters: Record<string, unknown> } }>;
    [key: string]: unknown;
  };
  /** Set when the client went away before the reply ended (e.g. a timeout aborted it). */
  aborted: boolean;
};

/** Writes one scripted reply; resolves when it is done writing. */
export type TReply = (res: ServerResponse, req: TFakeRequest) => Promise<void>;

/** One streamed step of a reply: a chunk delta, a pause, or a wait for the test's go-ahead. */
export type TStreamStep =
  | { content: string }
  | { reasoning: string }
  | { toolCall: { index: number; id?: string; name?: string; arguments?: string } }
  | { finish: "stop" | "tool_calls" | "length" }
  | { usage: { prompt_tokens: number; completion_tokens: number } }
  | { error: { message: string; code?: number | string } }
  | { raw: string }
  | { sleep: number }
  | { gate: Promise<void> }
  | { destroy: true };

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: "chatcmpl-fake",
  object: "chat.completion.chunk",
  created: 1,
  model: "fake",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** A streamed reply in the OpenAI chat completions protocol (`data: {…}` chunks, then `data: [DONE]`). */
export function streamed(steps: TStreamStep[], options: { done?: boolean } = {}): TReply {
  return async (res, req) => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    res.flushHeaders();
    const send = (data: unknown) => res.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
    for (const step of steps) {
      if (req.aborted) return;
      if ("sleep" in step) await new Promise((r) => setTimeout(r, step.sleep));
      else if ("gate" in step) await step.gate;
      else if ("destroy" in step) {
        res.socket?.destroy();
        return;
      } else if ("content" in step) send(chunk({ role: "assistant", content: step.content }));
      else if ("reasoning" in step) send(chunk({ role: "assistant", reasoning_content: step.reasoning }));
      else if ("toolCall" in step) {
        const { index, id, name, arguments: args } = step.toolCall;
        send(chunk({ tool_calls: [{ index, ...(id ? { id, type: "function" } : {}), function: { ...(name ? { name } : {}), ...(args !== undefined ? { arguments: args } : {}) } }] }));
      } else if ("finish" in step) send(chunk({}, step.finish));
      else if ("usage" in step) send({ id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1, model: "fake", choices: [], usage: { ...step.usage, total_tokens: step.usage.prompt_tokens + step.usage.completion_tokens } });
      else if ("error" in step) send({ error: step.error });
      else if ("raw" in step) res.write(step.raw);
    }
    if (req.aborted) return;
    if (options.done !== false) send("[DONE]");
    res.end();
  };
}

/** Text in pieces, then `stop` (and usage when given). */
export const textReply = (pieces: string[], usage?: { prompt_tokens: number; completion_tokens: number }): TReply =>
  streamed([...pieces.map((content) => ({ content })), { finish: "stop" }, ...(usage ? [{ usage }] : [])]);

/** Tool calls (arguments given as raw JSON text, streamed in two halves), then `tool_calls`. */
export function toolReply(calls: Array<{ name: string; arguments: string }>, options: { text?: string; usage?: { prompt_tokens: number; completion_tokens: number } } = {}): TReply {
  const steps: TStreamStep[] = [];
  if (options.text) steps.push({ content: options.text });
  calls.forEach((call, index) => {
    const half = Math.floor(call.arguments.length / 2);
    steps.push({ toolCall: { index, id: `call_fake_${index}`, name: call.name, arguments: call.arguments.slice(0, half) } });
    steps.push({ toolCall: { index, arguments: call.arguments.slice(half) } });
  });
  steps.push({ finish: "tool_calls" });
  if (options.usage) steps.push({ usage: options.usage });
  return streamed(steps);
}

/** A plain HTTP error before any streaming. */
export const httpError =
  (status: number, message = "upstream failure"): TReply =>
  async (res) => {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message, type: "server_error", code: status } }));
  };

export type TFakeModel = {
  url: string;
  requests: TFakeRequest[];
  /** Queues replies for the next requests, in order. */
  reply: (...replies: TReply[]) => void;
  /** Replies queued but not yet used. */
  pending: () => number;
  close: () => Promise<void>;
};

/**
 * A local HTTP server speaking the OpenAI-compatible chat completions protocol with scripted,
 * streamed replies, one per request (a request with no reply left gets a 500 that says so).
 */
export async function startFakeModel(): Promise<TFakeModel> {
  const requests: TFakeRequest[] = [];
  const queue: TReply[] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => {
      raw += c.toString();
    });
    req.on("end", () => {
      const record: TFakeRequest = { path: req.url ?? "", headers: req.headers, body: JSON.parse(raw || "{}"), aborted: false };
      requests.push(record);
      res.on("close", () => {
        if (!res.writableFinished) record.aborted = true;
      });
      const reply = queue.shift();
      if (!reply) {
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "The fake model has no scripted reply left." } }));
        return;
      }
      reply(res, record).catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    reply: (...replies) => queue.push(...replies),
    pending: () => queue.length,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * An `openai-compatible` agent against a fake endpoint at `baseURL`, with exec (always asked) and echo
 * (never). Its timeouts are generous: a loaded machine must never trip them (a test of one sets its
 * own through `endpoint`); `extra` overrides anything else.
 */
export function fakeModelAgent(baseURL: string, name: string, endpoint: Partial<NonNullable<TAgentConfig["endpoint"]>> = {}, extra: Partial<TAgentConfig> = {}): TAgentConfig {
  return {
    name,
    harness: "openai-compatible",
    model: "fake-model",
    description: "A model agent against the fake endpoint.",
    endpoint: { baseURL, maxRetries: 0, timeoutMs: 60_000, firstTokenTimeoutMs: 30_000, ...endpoint },
    system: "You are a test agent.",
    tools: [execTool, echoTool],
    approval: { exec: "always", echo: "never" },
    approvalTtlMs: 60_000,
    clientToolTtlMs: 60_000,
    maxTurns: 8,
    ...extra,
  };
}
