import { classifyTerminalOutcome } from "../core/runtime";
import type { Attempt } from "../host/attempt";

/** One completed model response. */
export type TModelTurn = {
  text?: string;
  reasoning?: string;
  planText?: string;
  toolCalls: Array<{ name: string; arguments: unknown }>;
  usage?: { inputTokens?: number; outputTokens?: number };
};

export type TConversationEntry =
  | { role: "user"; content: unknown }
  | { role: "assistant"; text: string; toolCalls: Array<{ id: string; name: string; arguments: unknown }> }
  | { role: "tool"; callId: string; name: string; output: unknown };

/** A model behind the loop: scripted, or a real endpoint. `null` means it has nothing more to say. */
export type TModelDriver = {
  nextTurn: (conversation: readonly TConversationEntry[], turnIndex: number, signal: AbortSignal) => Promise<TModelTurn | null>;
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
  const conversation: TConversationEntry[] = [{ role: "user", content: attempt.input }];
  let active: "primary" | "fallback" = "primary";
  let fallbackStart = 0;
  for (let turnIndex = 0; turnIndex < attempt.agent.maxTurns; turnIndex++) {
    let ranNow = false;
    const turn = await attempt.step(`model:${turnIndex}`, async (record): Promise<TStoredTurn | null> => {
      ranNow = true;
      const steering = await attempt.claimSteering(turnIndex);
      for (const text of steering) conversation.push({ role: "user", content: text });
      const model = active === "primary" ? driver : (fallback as TModelDriver);
      const next = await model.nextTurn(conversation, active === "primary" ? turnIndex : turnIndex - fallbackStart, attempt.signal);
      if (!next) return null;
      const itemId = `msg_${turnIndex}`;
      if (next.reasoning) {
        record.item({ type: "thinking", text: next.reasoning });
        record.frame("response.thinking.delta", { delta: next.reasoning, itemId: `rsn_${turnIndex}`, occurrenceId: `occ_rsn_${turnIndex}_0` });
      }
      if (next.text) {
        record.item({ type: "message", role: "assistant", content: [{ type: "output_text", text: next.text }] });
        record.frame("response.text.delta", { delta: next.text, itemId, occurrenceId: `occ_${turnIndex}_0` });
      }
      if (next.planText) record.event("model.plan", { planText: next.planText });
      next.toolCalls.forEach((call, i) => {
        const id = callId(turnIndex, i);
        record.item({ type: "tool_call", id, name: call.name, arguments: call.arguments });
        record.frame("response.tool_call", { id, name: call.name, arguments: call.arguments });
      });
      if (next.usage) record.usage(next.usage);
      record.event("model.turn", {
        turn: turnIndex,
        model: active,
        textChars: next.text?.length ?? 0,
        reasoningChars: next.reasoning?.length ?? 0,
        toolCalls: next.toolCalls.map((c) => c.name),
        outputTokens: next.usage?.outputTokens ?? 0,
        steeringMessages: steering.length,
      });
      return { ...next, steering, model: active };
    });
    if (!turn) return;
    // On replay the stored turn carries the steering messages it was given.
    if (!ranNow) for (const text of turn.steering ?? []) conversation.push({ role: "user", content: text });
    const calls = turn.toolCalls.map((call, i) => ({ id: callId(turnIndex, i), name: call.name, arguments: call.arguments }));
    conversation.push({ role: "assistant", text: turn.text ?? "", toolCalls: calls });
    if (calls.length > 0) {
      for (const call of calls) {
        const output = await attempt.runTool(call, recentContext(conversation));
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
  }
  throw new Error(`The agent reached its limit of ${attempt.agent.maxTurns} model turns.`);
}

const callId = (turnIndex: number, index: number): string => `call_${turnIndex}_${index}`;

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
