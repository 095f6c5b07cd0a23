import { classifyTerminalOutcome } from "../core/runtime";
import { DomainError } from "../core/errors";
import { type Attempt, AttemptSuspended } from "../host/attempt";
import type { TNativeAttemptParams, TNativeResult } from "../../plugin-sdk/loops";
import { createToolSurface } from "../host/tool-surface";
import { recordReplyMedia } from "../host/media/reply-items";

export type TNativeRun = (params: TNativeAttemptParams) => Promise<TNativeResult>;

/**
 * Runs a native-loop attempt: the plugin runs its own model and its own tools and asks the host
 * before each tool call (`runBeforeToolCall`). A decision that needs a person suspends the run;
 * after it, the attempt runs the loop again from the start, and an identical call gets the
 * recorded decision without asking again. The final text is recorded once, as a step.
 */
export async function runNativeLoop(attempt: Attempt, run: TNativeRun): Promise<void> {
  const surface = createToolSurface(attempt, attempt.agent.nativeTools ?? []);
  const base = attempt.harnessCapabilities;
  const endpoint = attempt.agent.endpoint;
  let result: TNativeResult;
  const reportedBefore = attempt.reportedOutputTokens;
  try {
    result = await run({
      input: attempt.input,
      agent: {
        name: attempt.agent.name,
        model: attempt.agent.model,
        ...(attempt.agent.system ? { system: attempt.agent.system } : {}),
        ...(endpoint
          ? { endpoint: { baseURL: endpoint.baseURL, ...(endpoint.apiKeyEnv && attempt.deps.config.environment[endpoint.apiKeyEnv] ? { apiKey: attempt.deps.config.environment[endpoint.apiKeyEnv] } : {}), ...(endpoint.headers ? { headers: { ...endpoint.headers } } : {}) } }
          : {}),
        nativeTools: Object.freeze([...(attempt.agent.nativeTools ?? [])]),
      },
      hostCapabilities: { ...base, finalizeAgentToolAvailability: surface.finalizeAgentToolAvailability, runBeforeToolCall: surface.runBeforeToolCall, recordToolResult: surface.recordToolResult },
      signal: attempt.signal,
    });
  } catch (error) {
    // However the loop handled the host's suspension, the run waits for the decision.
    if (surface.suspended()) throw new AttemptSuspended();
    throw error;
  } finally {
    surface.close();
  }
  if (surface.suspended()) throw new AttemptSuspended();
  attempt.assertNotCancelled();
  if (!result || typeof result.text !== "string") throw new DomainError("invalid_request", `The native harness ${attempt.agent.harness} returned no { text } result.`);
  const { text } = result;
  // Reply media: only what this attempt's prepareReplyMedia stored, as the host recorded it.
  const media = result.media === undefined ? null : attempt.capabilities.deliverableMedia(result.media);
  // Tokens the loop reported live (once per model response, as the seed asks) are counted already:
  // then the output tokens of the usage it returns are not counted again.
  const usage = result.usage && attempt.reportedOutputTokens > reportedBefore ? { ...result.usage, outputTokens: undefined } : result.usage;
  await attempt.step("native:final", async (record) => {
    if (text) {
      record.item({ type: "message", role: "assistant", content: [{ type: "output_text", text }] });
      record.frame("response.text.delta", { delta: text, itemId: "msg_native", occurrenceId: "occ_native_0" });
    }
    if (media) recordReplyMedia(record, attempt.response.id, media);
    if (usage) record.usage(usage);
    record.event("native.completed", { textChars: text.length, outputTokens: usage?.outputTokens ?? attempt.reportedOutputTokens - reportedBefore });
    const outcome = classifyTerminalOutcome({ visibleText: text });
    if (outcome) record.event("response.outcome", { turn: 0, classification: outcome, fallback: null });
    return { textChars: text.length };
  });
}
