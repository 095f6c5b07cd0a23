import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText } from "ai";
import { findReviewerInjection } from "./injection";
import { MODEL_VERDICT_JSON_SCHEMA, parseModelVerdict, REVIEW_SYSTEM_PROMPT, reviewUserMessage } from "./model-output";
import type { TExecReviewer, TReviewRequest, TReviewVerdict } from "./types";
import { allowOnceVerdict, askVerdict, clip, denyVerdict, elapsedSince } from "./verdicts";

/** How the reviewer asks the endpoint for JSON. */
export type TResponseFormat = "json_object" | "json_schema" | "none";

/** Options of the model reviewer. */
export type TModelReviewerOptions = {
  /** The OpenAI-compatible API root, e.g. `https://api.openai.com/v1`; `/chat/completions` is appended. */
  baseURL: string;
  /** The model id sent to the endpoint. */
  model: string;
  /** Sent as `Authorization: Bearer …` when given. */
  apiKey?: string;
  /** The whole review's budget; past it the verdict is `ask`. Default 15000. */
  timeoutMs?: number;
  /** Recorded as the verdict's `reviewer`; default `model:<model>`. */
  name?: string;
  /**
   * `json_object` (default) asks for JSON mode; `json_schema` sends the strict verdict schema
   * (OpenAI structured outputs, LM Studio); `none` relies on the prompt, for endpoints that reject
   * `response_format`. The answer is parsed and validated the same way in every case.
   */
  responseFormat?: TResponseFormat;
  /** Sampling temperature; omitted by default because some reasoning models reject it. */
  temperature?: number;
};

const DEFAULT_TIMEOUT_MS = 15_000;

function responseFormatBody(format: TResponseFormat) {
  if (format === "json_object") return { type: "json_object" };
  if (format === "json_schema") {
    return { type: "json_schema", json_schema: { name: "exec_review_verdict", strict: true, schema: MODEL_VERDICT_JSON_SCHEMA } };
  }
  return undefined;
}

/** Rejects as soon as `signal` aborts, so a provider that ignores the signal cannot hold the review. */
function abortion(signal: AbortSignal): { promise: Promise<never>; dispose: () => void } {
  let onAbort = () => {};
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason ?? new Error("aborted"));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener("abort", onAbort) };
}

/**
 * A reviewer that asks a model behind any OpenAI-compatible chat endpoint (non-streaming
 * `POST {baseURL}/chat/completions`). Reviewer-directed injection is denied before any call. It
 * never throws for provider problems: failures, timeouts, cancellation and invalid answers are
 * `ask`, and an allow at high risk is `ask` too.
 */
export function createModelReviewer(options: TModelReviewerOptions): TExecReviewer {
  const name = options.name ?? `model:${options.model}`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new Error("The reviewer timeout must be a positive number of milliseconds.");
  const responseFormat = responseFormatBody(options.responseFormat ?? "json_object");
  const provider = createOpenAICompatible({
    name: "exec-reviewer",
    baseURL: options.baseURL,
    apiKey: options.apiKey,
    transformRequestBody: responseFormat ? (body) => ({ ...body, response_format: responseFormat }) : undefined,
  });
  const model = provider.chatModel(options.model);

  const review = async (request: TReviewRequest, signal?: AbortSignal): Promise<TReviewVerdict> => {
    const startedAt = performance.now();
    const base = { reviewer: name };
    const injection = findReviewerInjection(request);
    if (injection) {
      const rationale = `Reviewer-directed prompt injection in the ${injection.field}: ${injection.evidence}.`;
      return denyVerdict({ ...base, risk: "high", rationale, latencyMs: elapsedSince(startedAt) });
    }
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([timeout, signal]) : timeout;
    const aborted = abortion(combined);
    let text: string;
    try {
      const call = generateText({
        model,
        system: REVIEW_SYSTEM_PROMPT,
        prompt: reviewUserMessage(request),
        temperature: options.temperature,
        // A retry would spend the timeout budget; a failed review already falls back to a person.
        maxRetries: 0,
        abortSignal: combined,
      });
      call.catch(() => {});
      text = (await Promise.race([call, aborted.promise])).text;
    } catch (error) {
      const latencyMs = elapsedSince(startedAt);
      const rationale = timeout.aborted
        ? `The model reviewer did not answer within ${timeoutMs} ms.`
        : signal?.aborted
          ? "The review was cancelled before the model answered."
          : `The model reviewer failed: ${clip(error instanceof Error ? error.message : String(error), 300)}`;
      return askVerdict({ ...base, risk: null, rationale, latencyMs });
    } finally {
      aborted.dispose();
    }
    const latencyMs = elapsedSince(startedAt);
    const parsed = parseModelVerdict(text);
    if (!parsed.ok) return askVerdict({ ...base, risk: null, rationale: `The model reviewer gave an invalid answer: ${parsed.reason}.`, latencyMs });
    const { decision, risk, rationale } = parsed.verdict;
    if (decision === "deny") return denyVerdict({ ...base, risk, rationale, latencyMs });
    if (decision === "ask") return askVerdict({ ...base, risk, rationale, latencyMs });
    if (risk === "high") {
      return askVerdict({ ...base, risk, rationale: `The model allowed the command but rated it high risk, so a person decides: ${rationale}`, latencyMs });
    }
    return allowOnceVerdict({ ...base, risk, rationale, latencyMs });
  };
  return { name, review };
}
