/**
 * The loops a harness plugin writes (docs/plugins.md): a driver of the host's agent loop, one
 * completed model turn at a time (`createDriver`), or a native loop that runs its own model and
 * tools and asks the host before each call (`run`, plugin API 1.1). server/harnesses/model-loop.ts
 * and server/harnesses/native-loop.ts run them.
 */
import type { THostCapabilities } from "./capabilities";
import type { TContextMedia, TPreparedMedia } from "./media";
import type { TToolSurfaceCapabilities } from "./tool-surface";

/** One completed model response. */
export type TModelTurn = {
  text?: string;
  reasoning?: string;
  planText?: string;
  /** `error`: the call is not run; this error is its result (e.g. arguments that are not valid JSON). */
  toolCalls: Array<{ name: string; arguments: unknown; error?: string }>;
  usage?: { inputTokens?: number; outputTokens?: number };
  /** Why the model stopped (`stop`, `tool-calls`, `length`, ...), when it says. */
  finishReason?: string;
  /** Workspace files to attach to the answer (prepared by the host's `prepareReplyMedia`). */
  replyAttachments?: string[];
};

export type TConversationEntry =
  | { role: "user"; content: unknown; media?: TContextMedia }
  | { role: "assistant"; text: string; toolCalls: Array<{ id: string; name: string; arguments: unknown }> }
  | { role: "tool"; callId: string; name: string; output: unknown };

/** Where a driver hands text and reasoning as they stream in. */
export type TTurnStream = { text: (delta: string) => void; reasoning: (delta: string) => void };

/**
 * The guard a driver calls synchronously right before each request to the model and before each
 * retry of it, with no await between the call and the request going out. It throws when the
 * request may not go as built (the attempt was cancelled, or a steering message in it was
 * revoked); the driver then sends nothing more.
 */
export type TBeforeDispatch = () => void;

/** Where an `openai-compatible` agent's model lives. */
export type TModelEndpoint = {
  /** The API root, e.g. `http://127.0.0.1:8080/v1`; `/chat/completions` is appended. */
  baseURL: string;
  /** The environment variable holding the API key (read at each call, never stored). */
  apiKeyEnv?: string;
  /** Extra request headers (not for secrets: use `apiKeyEnv`). */
  headers?: Record<string, string>;
  /** Budget of one model response, first byte to last. Default 300000. */
  timeoutMs?: number;
  /** How long the model may take before its first token (text, reasoning or tool call). Default 120000. */
  firstTokenTimeoutMs?: number;
  /** Retries of a failed request before anything streamed (connection refused, 5xx, 429). Default 2. */
  maxRetries?: number;
  /** Sends `stream_options: {include_usage: true}` so the endpoint reports token usage. Default true. */
  includeUsage?: boolean;
  temperature?: number;
  maxOutputTokens?: number;
};

/** Where the agent's model lives, as a native loop receives it (the API key read from its variable now). */
export type TNativeEndpoint = { baseURL: string; apiKey?: string; headers?: Record<string, string> };

/** What one attempt of a native-loop harness receives (plugin API 1.1). */
export type TNativeAttemptParams = {
  /** The run's input as the caller sent it (validated by the harness's `parseInput`). */
  input: unknown;
  agent: { name: string; model: string; system?: string; endpoint?: TNativeEndpoint; nativeTools: readonly string[] };
  /** The attempt's capabilities and the tool-surface ones; all fail closed once the attempt settles. */
  hostCapabilities: THostCapabilities & TToolSurfaceCapabilities;
  /** Aborted when the attempt is cancelled (a person, its deadline, a shutdown). */
  signal: AbortSignal;
};

/**
 * What a native loop answers: the final text, the usage of its model calls in this attempt, and
 * the reply media to deliver with the answer: what this attempt's `media.prepareReplyMedia`
 * returned (its attachments become `attachment` items, its failures `attachment_failure`
 * notices). Only media this attempt prepared is delivered; anything else refuses the result.
 */
export type TNativeResult = { text: string; usage?: { inputTokens?: number; outputTokens?: number }; media?: TPreparedMedia };
