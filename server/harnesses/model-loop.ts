import { classifyTerminalOutcome, InjectionRevokedError } from "../core/runtime";
import { context as otelContext } from "@opentelemetry/api";
import type { Attempt, TSteeringClaim } from "../host/attempt";
import { AttemptSuspended } from "../host/attempt-errors";
import { endOnce, SPAN, startSpan } from "../observe/spans";
import type { TBeforeDispatch, TConversationEntry, TModelTurn, TTurnStream } from "../../plugin-sdk/loops";
import { liveDeltas } from "./live-deltas";
import { recordReplyMedia } from "../host/media/reply-items";

/**
 * A model behind the loop: scripted, or a real endpoint. `null` means it has nothing more to say.
 * A driver that streams hands every text and reasoning delta to `stream` (committed live); the
 * returned turn is still the step's stored result, so a replay never calls the model again. A
 * driver calls `beforeDispatch` right before each request (first and every retry).
 */
export type TModelDriver = {
  nextTurn: (conversation: readonly TConversationEntry[], turnIndex: number, signal: AbortSignal, stream?: TTurnStream, beforeDispatch?: TBeforeDispatch) => Promise<TModelTurn | null>;
};

type TStoredTurn = TModelTurn & { steering?: string[]; model: "primary" | "fallback" };

/**
 * The agent loop every model-driven harness shares: ask the model, run its tool calls, feed the
 * results back, until a turn calls no tools. Each model turn and each tool call is a step, so a
 * resumed attempt replays them from the log instead of calling the model or the tool again.
 * Steering messages are claimed at each turn boundary. A final turn with no visible text is
 * classified (empty, reasoning-only, planning-only) and the fallback model is tried once.
 */
export async function runModelLoop(attempt: Attempt, driver: TModelDriver, fallback?: TModelDriver): Promise<void> {
  // The run's attachments are rebuilt from the media store on every attempt (a resumed run sends the same context).
  const media = (await attempt.capabilities.media.prepareContextMedia({})) ?? undefined;
  const conversation: TConversationEntry[] = [{ role: "user", content: attempt.input, ...(media ? { media } : {}) }];
  let active: "primary" | "fallback" = "primary";
  let fallbackStart = 0;
  for (let turnIndex = 0; turnIndex < attempt.agent.maxTurns; turnIndex++) {
    // Each turn is a span under the run's (model call and tool calls are its children); a replayed one says so.
    const turnSpan = startSpan(attempt.deps.observe.tracer, SPAN.turn, attempt.runtime.trace, { "countersign.turn": turnIndex, "countersign.response_id": attempt.response.id });
    let turnOutcome = "completed";
    try {
      let ranNow = false;
      const turn = await attempt.step(`model:${turnIndex}`, async (record): Promise<TStoredTurn | null> => {
        ranNow = true;
        // A cancelled or timed-out attempt asks the model nothing more.
        attempt.assertNotCancelled();
        let claim = await attempt.claimSteering(turnIndex);
        const reportedBefore = attempt.reportedOutputTokens;
        const model = active === "primary" ? driver : (fallback as TModelDriver);
        const live = liveDeltas(record.liveFrame, turnIndex);
        let next: TModelTurn | null;
        try {
          // The model call runs in the turn's context, so the AI SDK's spans (when tracing) are its children.
          ({ next, claim } = await otelContext.with(turnSpan.context, () => askWithSteering(attempt, model, conversation, active === "primary" ? turnIndex : turnIndex - fallbackStart, claim, live.stream)));
        } finally {
          // Deltas received before a failure stay in the trajectory, ahead of the error.
          await live.close();
        }
        const steering = claim.texts;
        for (const text of steering) conversation.push({ role: "user", content: text });
        // Messages commit with the turn that used them; without a turn they stay queued (and are cancelled at settlement).
        record.steering(claim, next !== null);
        if (!next) return null;
        const itemId = `msg_${turnIndex}`;
        if (next.reasoning) {
          record.item({ type: "thinking", text: next.reasoning });
          if (!live.streamed.reasoning) record.frame("response.thinking.delta", { delta: next.reasoning, itemId: `rsn_${turnIndex}`, occurrenceId: `occ_rsn_${turnIndex}_0` });
        }
        if (next.text) {
          record.item({ type: "message", role: "assistant", content: [{ type: "output_text", text: next.text }] });
          if (!live.streamed.text) record.frame("response.text.delta", { delta: next.text, itemId, occurrenceId: `occ_${turnIndex}_0` });
        }
        if (next.planText) record.event("model.plan", { planText: next.planText });
        next.toolCalls.forEach((call, i) => {
          const id = callId(turnIndex, i);
          record.item({ type: "tool_call", id, name: call.name, arguments: call.arguments });
          record.frame("response.tool_call", { id, name: call.name, arguments: call.arguments });
        });
        // A driver that reported this turn's tokens live (reportOutputTokens) has them counted already.
        const usage = next.usage && attempt.reportedOutputTokens > reportedBefore ? { ...next.usage, outputTokens: undefined } : next.usage;
        if (usage) record.usage(usage);
        record.event("model.turn", {
          turn: turnIndex,
          model: active,
          textChars: next.text?.length ?? 0,
          reasoningChars: next.reasoning?.length ?? 0,
          toolCalls: next.toolCalls.map((c) => c.name),
          outputTokens: usage?.outputTokens ?? attempt.reportedOutputTokens - reportedBefore,
          steeringMessages: steering.length,
          ...(next.finishReason ? { finishReason: next.finishReason } : {}),
          ...(live.streamed.text || live.streamed.reasoning ? { occurrenceId: live.ids.text.occurrenceId } : {}),
        });
        return { ...next, steering, model: active };
      });
      turnSpan.span.setAttribute("countersign.replayed", !ranNow);
      if (!turn) return;
      // On replay the stored turn carries the steering messages it was given.
      if (!ranNow) for (const text of turn.steering ?? []) conversation.push({ role: "user", content: text });
      if (turn.replyAttachments && turn.replyAttachments.length > 0) await attachReplyMedia(attempt, turnIndex, turn.replyAttachments);
      const calls = turn.toolCalls.map((call, i) => ({ id: callId(turnIndex, i), name: call.name, arguments: call.arguments }));
      conversation.push({ role: "assistant", text: turn.text ?? "", toolCalls: calls });
      if (calls.length > 0) {
        for (const [i, call] of calls.entries()) {
          const invalid = turn.toolCalls[i]?.error;
          const tool = startSpan(attempt.deps.observe.tracer, SPAN.toolCall, turnSpan.context, { "countersign.tool.name": call.name, "countersign.tool.call_id": call.id, "countersign.response_id": attempt.response.id });
          let output: unknown;
          try {
            output = invalid ? await refuseCall(attempt, call, invalid) : await attempt.runTool(call, recentContext(conversation));
            endOnce(tool.span, invalid ? "refused" : "completed");
          } catch (error) {
            // A call that waits for a person or a client suspends the run: its span ends here, the wait goes on.
            if (error instanceof AttemptSuspended) endOnce(tool.span, "suspended");
            else endOnce(tool.span, "failed", error);
            throw error;
          }
          conversation.push({ role: "tool", callId: call.id, name: call.name, output });
        }
        continue;
      }
      if (active === "fallback") return;
      // Classification is a pure function of the stored turn, so replays reach the same verdict.
      const outcome = classifyTerminalOutcome({ visibleText: turn.text ?? "", reasoningText: turn.reasoning, planText: turn.planText });
      if (outcome) {
        await attempt.step(`outcome:${turnIndex}`, async (record) => {
          record.event("response.outcome", { turn: turnIndex, classification: outcome, fallback: fallback ? (attempt.agent.fallbackModel ?? "fallback") : null });
          return outcome;
        });
      }
      if (!outcome || !fallback) return;
      active = "fallback";
      fallbackStart = turnIndex + 1;
    } catch (error) {
      turnOutcome = error instanceof AttemptSuspended ? "suspended" : "failed";
      throw error;
    } finally {
      endOnce(turnSpan.span, turnOutcome);
    }
  }
  throw new Error(`The agent reached its limit of ${attempt.agent.maxTurns} model turns.`);
}

const callId = (turnIndex: number, index: number): string => `call_${turnIndex}_${index}`;

/**
 * Attaches the workspace files a turn named to the answer, once (a step): stored attachments
 * become `attachment` items, the rest `attachment_failure` notices. The assistant's text is
 * never changed.
 */
async function attachReplyMedia(attempt: Attempt, turnIndex: number, paths: string[]): Promise<void> {
  await attempt.step(`reply-media:${turnIndex}`, async (record) => {
    const prepared = await attempt.capabilities.media.prepareReplyMedia({ kind: "attempt", attempt: { paths } });
    if (prepared.kind !== "attempt") return null;
    recordReplyMedia(record, attempt.response.id, prepared.preparedMedia);
    return { attachments: prepared.preparedMedia.attachments.length, failures: prepared.preparedMedia.failures.length };
  });
  attempt.assertNotCancelled();
}

/**
 * Asks the model with the claimed steering messages after the conversation. Right before each
 * request and each retry (the driver's `beforeDispatch`) the attempt must still be live and
 * every message in the request still current. A message revoked since is dropped for good and
 * the request is built again without it, so the other messages still go; the rebuilt request
 * spends none of the driver's retries. Returns the turn and the claim as it then stands.
 */
async function askWithSteering(
  attempt: Attempt,
  model: TModelDriver,
  conversation: readonly TConversationEntry[],
  turnIndex: number,
  claimed: TSteeringClaim,
  stream: TTurnStream,
): Promise<{ next: TModelTurn | null; claim: TSteeringClaim }> {
  let claim = claimed;
  for (;;) {
    const request: TConversationEntry[] = [...conversation, ...claim.texts.map((text) => ({ role: "user" as const, content: text }))];
    let revokedNow = false;
    const beforeDispatch: TBeforeDispatch = () => {
      attempt.assertNotCancelled();
      const { dispatched, revoked } = attempt.runtime.steering.recheck(claim.dispatched);
      if (revoked.length === 0) return;
      claim = { ...claim, dispatched, revoked: [...claim.revoked, ...revoked], texts: dispatched.map((d) => d.text) };
      revokedNow = true;
      throw new InjectionRevokedError("A steering message's source was revoked before dispatch; the request goes again without it.");
    };
    try {
      return { next: await model.nextTurn(request, turnIndex, attempt.signal, stream, beforeDispatch), claim };
    } catch (error) {
      // Whatever the driver made of the guard's throw, nothing went out after it: ask again.
      if (!revokedNow) throw error;
    }
  }
}

/**
 * A call the driver could not decode (e.g. arguments that are not valid JSON): never run; its
 * result is the error, recorded as the call's tool step exactly like `runTool` records one, so
 * the model reads why and a replay returns the same result.
 */
async function refuseCall(attempt: Attempt, call: { id: string; name: string }, error: string): Promise<unknown> {
  return attempt.step(`tool:${call.id}`, async (record) => {
    const output = { error };
    record.item({ type: "tool_result", callId: call.id, name: call.name, output });
    record.frame("response.tool_result", { callId: call.id, name: call.name, output });
    return output;
  });
}

/** The last few conversation entries as `user:` / `agent:` lines, for the exec reviewer. */
function recentContext(conversation: readonly TConversationEntry[]): string {
  return conversation
    .slice(-6)
    .map((entry) => {
      if (entry.role === "user") return `user: ${typeof entry.content === "string" ? entry.content : JSON.stringify(entry.content).slice(0, 500)}`;
      if (entry.role === "assistant") return `agent: ${entry.text}${entry.toolCalls.length ? ` [calls ${entry.toolCalls.map((c) => c.name).join(", ")}]` : ""}`;
      return `tool ${entry.name}: ${JSON.stringify(entry.output).slice(0, 500)}`;
    })
    .join("\n");
}
