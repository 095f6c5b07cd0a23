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

/**
 * The agent loop every model-driven harness shares: ask the model, run its tool calls, feed the
 * results back, until a turn calls no tools. Each model turn and each tool call is a step, so a
 * resumed attempt replays them from the log instead of calling the model or the tool again.
 */
export async function runModelLoop(attempt: Attempt, driver: TModelDriver): Promise<void> {
  const conversation: TConversationEntry[] = [{ role: "user", content: attempt.input }];
  for (let turnIndex = 0; turnIndex < attempt.agent.maxTurns; turnIndex++) {
    const turn = await attempt.step(`model:${turnIndex}`, async (record) => {
      const next = await driver.nextTurn(conversation, turnIndex, attempt.signal);
      if (!next) return null;
      if (next.reasoning) {
        record.item({ type: "thinking", text: next.reasoning });
        record.frame("response.thinking.delta", { delta: next.reasoning });
      }
      if (next.text) {
        record.item({ type: "message", role: "assistant", content: [{ type: "output_text", text: next.text }] });
        record.frame("response.text.delta", { delta: next.text });
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
        textChars: next.text?.length ?? 0,
        reasoningChars: next.reasoning?.length ?? 0,
        toolCalls: next.toolCalls.map((c) => c.name),
        outputTokens: next.usage?.outputTokens ?? 0,
      });
      return next;
    });
    if (!turn) return;
    const calls = turn.toolCalls.map((call, i) => ({ id: callId(turnIndex, i), name: call.name, arguments: call.arguments }));
    conversation.push({ role: "assistant", text: turn.text ?? "", toolCalls: calls });
    if (calls.length === 0) return;
    for (const call of calls) {
      const output = await attempt.runTool(call);
      conversation.push({ role: "tool", callId: call.id, name: call.name, output });
    }
  }
  throw new Error(`The agent reached its limit of ${attempt.agent.maxTurns} model turns.`);
}

const callId = (turnIndex: number, index: number): string => `call_${turnIndex}_${index}`;
