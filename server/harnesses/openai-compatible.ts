import type { Tracer } from "@opentelemetry/api";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError, type JSONValue, jsonSchema, type ModelMessage, streamText, type ToolSet } from "ai";
import { z } from "zod";
import { ZTtlMs } from "../core/ttl";
import type { TAgentConfig } from "../agents/types";
import { argumentsJsonSchema } from "../tools/arguments-json-schema";
import { HarnessFailure } from "../host/attempt-errors";
import type { TBeforeDispatch, TConversationEntry, TModelTurn, TTurnStream } from "../../plugin-sdk/loops";
import type { TModelDriver } from "./model-loop";


export const DEFAULT_MODEL_TIMEOUT_MS = 300_000;
export const DEFAULT_FIRST_TOKEN_TIMEOUT_MS = 120_000;

/** The object form of a model agent's `input` (a plain string is the user's message). */
export const ZModelInput = z.strictObject({
  text: z.string().min(1).max(1_000_000),
  /** Execution timeout of each attempt of this response. */
  timeoutMs: z.number().int().min(1000).max(24 * 3_600_000).optional(),
  approvalTtlMs: ZTtlMs.optional(),
  clientToolTtlMs: ZTtlMs.optional(),
});
export type TModelInput = z.infer<typeof ZModelInput>;

/** Validates a model agent's input: a non-empty string or `{text, timeoutMs?, approvalTtlMs?, clientToolTtlMs?}`. */
export function parseModelInput(input: unknown): { ok: true; value: TModelInput } | { ok: false; message: string } {
  if (typeof input === "string") return { ok: true, value: { text: input } };
  const parsed = ZModelInput.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, message: `input: ${issue?.path.join(".") || "input"}: ${issue?.message ?? "invalid input"} (a model agent takes a string or {"text": …}).` };
}

/** The endpoint as messages name it: no credentials or query string, even if the URL carries them. */
const displayUrl = (baseURL: string): string => {
  try {
    const url = new URL(baseURL);
    return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  } catch {
    return "the configured endpoint";
  }
};

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);
const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The JSON Schema the model is given for a tool's arguments (from its zod schema, as input). */
export const toolParameters = argumentsJsonSchema;

/** The agent's tools as the model sees them: names, descriptions and argument schemas, never an `execute`. */
export function declareTools(tools: ReadonlyArray<{ name: string; description: string; argsSchema: z.ZodType }>): ToolSet {
  const set: ToolSet = {};
  for (const t of tools) set[t.name] = { description: t.description, inputSchema: jsonSchema(toolParameters(t.argsSchema) as never) };
  return set;
}

const userText = (content: unknown): string => {
  if (typeof content === "string") return content;
  if (isPlainObject(content) && typeof content.text === "string") return content.text;
  return JSON.stringify(content) ?? "";
};

const jsonValue = (value: unknown): JSONValue => (value === undefined ? null : (JSON.parse(JSON.stringify(value) ?? "null") as JSONValue));

/**
 * The loop's conversation as chat messages. A pure function of the conversation, so a resumed
 * attempt (which rebuilds the conversation from the step log) sends the very same messages.
 * Arguments that were not a JSON object are sent back as `{}`; their tool result says why.
 */
export function toModelMessages(conversation: readonly TConversationEntry[]): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const entry of conversation) {
    if (entry.role === "user") {
      const text = userText(entry.content);
      if (!entry.media) {
        messages.push({ role: "user", content: text });
        continue;
      }
      // Images as image parts; documents as the bounded text (and labelled facts) the host prepared.
      const parts: Exclude<Extract<ModelMessage, { role: "user" }>["content"], string> = [{ type: "text", text }];
      if (entry.media.text) parts.push({ type: "text", text: entry.media.text });
      for (const image of entry.media.images) parts.push({ type: "image", image: image.data, mediaType: image.mediaType });
      messages.push({ role: "user", content: parts });
    } else if (entry.role === "assistant") {
      const parts: Exclude<Extract<ModelMessage, { role: "assistant" }>["content"], string> = [];
      if (entry.text) parts.push({ type: "text", text: entry.text });
      for (const call of entry.toolCalls) {
        parts.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: isPlainObject(call.arguments) ? call.arguments : {} });
      }
      messages.push({ role: "assistant", content: parts.length > 0 ? parts : "" });
    } else {
      const part = { type: "tool-result" as const, toolCallId: entry.callId, toolName: entry.name, output: { type: "json" as const, value: jsonValue(entry.output) } };
      const last = messages.at(-1);
      if (last?.role === "tool") last.content.push(part);
      else messages.push({ role: "tool", content: [part] });
    }
  }
  return messages;
}

const withCause = (error: Error): string => {
  const cause = error.cause instanceof Error && error.cause.message && !error.message.includes(error.cause.message) ? ` (${error.cause.message})` : "";
  return `${error.message.replace(/[.\s]+$/, "")}${cause}`;
};

/** What went wrong with a model call, for people; never the request body or headers. */
function describeError(error: unknown): string {
  if (APICallError.isInstance(error)) return clip(`${withCause(error)}${error.statusCode ? `, HTTP ${error.statusCode}` : ""}`, 300);
  if (error instanceof Error) return clip(withCause(error), 300);
  // An error object the endpoint streamed (`data: {"error": {...}}`).
  if (isPlainObject(error) && typeof error.message === "string") {
    const code = typeof error.code === "string" || typeof error.code === "number" ? `, code ${error.code}` : "";
    return clip(`the endpoint reported: ${error.message.replace(/[.\s]+$/, "")}${code}`, 300);
  }
  return clip(JSON.stringify(error) ?? String(error), 300);
}

/** `fetch` that runs `beforeDispatch` synchronously right before each request goes out (first and every retry). */
const guardedFetch =
  (beforeDispatch: TBeforeDispatch): typeof fetch =>
  (input, init) => {
    beforeDispatch();
    return fetch(input, init);
  };

/** Rejects once `signal` aborts, so a provider that ignores the signal cannot hold the turn. */
function abortion(signal: AbortSignal): { promise: Promise<never>; dispose: () => void } {
  let onAbort = () => {};
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason ?? new Error("aborted"));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  promise.catch(() => {});
  return { promise, dispose: () => signal.removeEventListener("abort", onAbort) };
}

/**
 * A model behind any OpenAI-compatible chat endpoint, driven through the AI SDK (`streamText`
 * over `@ai-sdk/openai-compatible`). Each `nextTurn` is one streamed chat completion: text and
 * reasoning deltas go to `stream` as they arrive; tool calls are returned, never executed (the
 * host's loop runs them with approvals, questions and client tools). Failures are
 * `HarnessFailure`s: `model_unavailable` (endpoint down, HTTP error, broken stream) or
 * `model_timeout` (no first token in time, or the response exceeded its budget). The endpoint's
 * `apiKeyEnv` is looked up in `environment` (the server's) at each call.
 */
export function openAICompatibleDriver(agent: TAgentConfig, options: { model?: string; tracer?: Tracer; environment?: Readonly<Record<string, string | undefined>> } = {}): TModelDriver {
  const modelId = options.model ?? agent.model;
  const endpoint = agent.endpoint;
  const timeoutMs = endpoint?.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
  const firstTokenTimeoutMs = endpoint?.firstTokenTimeoutMs ?? DEFAULT_FIRST_TOKEN_TIMEOUT_MS;
  const tools = declareTools(agent.tools);
  const known = new Set(agent.tools.map((t) => t.name));

  return {
    nextTurn: async (conversation, _turnIndex, signal, stream?: TTurnStream, beforeDispatch?: TBeforeDispatch): Promise<TModelTurn> => {
      if (!endpoint) throw new HarnessFailure("model_unavailable", `No model endpoint is configured for the agent ${agent.name}.`);
      const where = `The model ${modelId} at ${displayUrl(endpoint.baseURL)}`;
      const apiKey = endpoint.apiKeyEnv ? options.environment?.[endpoint.apiKeyEnv] : undefined;
      const provider = createOpenAICompatible({
        name: "countersign-model",
        baseURL: endpoint.baseURL,
        apiKey: apiKey || undefined,
        headers: endpoint.headers,
        includeUsage: endpoint.includeUsage ?? true,
        // The SDK awaits before it sends and retries on its own: the guard runs at each request itself.
        fetch: beforeDispatch ? guardedFetch(beforeDispatch) : undefined,
      });
      const deadline = new AbortController();
      let timedOut: string | null = null;
      const expire = (message: string) => {
        timedOut ??= message;
        deadline.abort(new HarnessFailure("model_timeout", message));
      };
      const total = setTimeout(() => expire(`${where} did not finish its response within ${timeoutMs} ms.`), timeoutMs);
      let firstToken: NodeJS.Timeout | null = setTimeout(() => expire(`${where} sent no first token within ${firstTokenTimeoutMs} ms.`), firstTokenTimeoutMs);
      const gotToken = () => {
        if (firstToken) clearTimeout(firstToken);
        firstToken = null;
      };
      const combined = AbortSignal.any([signal, deadline.signal]);
      const aborted = abortion(combined);
      let text = "";
      let reasoning = "";
      const toolCalls: TModelTurn["toolCalls"] = [];
      let usage: TModelTurn["usage"];
      let finishReason: string | undefined;
      let failure: unknown = null;
      try {
        const result = streamText({
          model: provider.chatModel(modelId),
          system: agent.system,
          messages: toModelMessages(conversation),
          tools: agent.tools.length > 0 ? tools : undefined,
          maxRetries: endpoint.maxRetries ?? 2,
          temperature: endpoint.temperature,
          maxOutputTokens: endpoint.maxOutputTokens,
          abortSignal: combined,
          // Errors arrive as `error` parts below; the default handler would only log them.
          onError: () => {},
          // When tracing is on, the AI SDK's spans of the call (model, tokens, finish reason) join the turn's
          // trace; prompts and outputs are not recorded (they may hold what people typed).
          ...(options.tracer ? { experimental_telemetry: { isEnabled: true, tracer: options.tracer, recordInputs: false, recordOutputs: false } } : {}),
        });
        const reader = result.fullStream.getReader();
        try {
          for (;;) {
            const next = await Promise.race([reader.read(), aborted.promise]);
            if (next.done) break;
            const part = next.value;
            switch (part.type) {
              case "text-delta":
                gotToken();
                text += part.text;
                stream?.text(part.text);
                break;
              case "reasoning-delta":
                gotToken();
                reasoning += part.text;
                stream?.reasoning(part.text);
                break;
              case "tool-input-start":
                gotToken();
                break;
              case "tool-call": {
                gotToken();
                const input: unknown = part.input;
                // The SDK marks a call it could not parse as `invalid`, keeping the raw text as input.
                if (part.invalid && known.has(part.toolName) && typeof input === "string") {
                  toolCalls.push({ name: part.toolName, arguments: input, error: `Invalid arguments for ${part.toolName}: they are not valid JSON (${clip(input, 200)}).` });
                } else {
                  toolCalls.push({ name: part.toolName, arguments: isPlainObject(input) ? input : input === undefined || input === "" ? {} : input });
                }
                break;
              }
              case "finish-step":
                gotToken();
                break;
              case "finish":
                finishReason = part.finishReason;
                usage = {
                  ...(part.totalUsage.inputTokens !== undefined ? { inputTokens: part.totalUsage.inputTokens } : {}),
                  ...(part.totalUsage.outputTokens !== undefined ? { outputTokens: part.totalUsage.outputTokens } : {}),
                };
                break;
              case "error":
                failure ??= part.error;
                break;
              default:
                break;
            }
          }
        } finally {
          await reader.cancel().catch(() => {});
        }
      } catch (error) {
        failure ??= error;
      } finally {
        clearTimeout(total);
        gotToken();
        aborted.dispose();
      }
      // The attempt's own cancellation (a person, the execution deadline, shutdown) wins.
      signal.throwIfAborted();
      const consequence = "The response failed; nothing from this model turn was run.";
      if (timedOut) throw new HarnessFailure("model_timeout", `${timedOut} ${consequence}`);
      if (failure) throw new HarnessFailure("model_unavailable", `${where} failed: ${describeError(failure)}. ${consequence}`);
      if (finishReason === "error") throw new HarnessFailure("model_unavailable", `${where} ended its response with an error. ${consequence}`);
      return { text, reasoning: reasoning || undefined, toolCalls, usage: usage && Object.keys(usage).length > 0 ? usage : undefined, finishReason };
    },
  };
}
