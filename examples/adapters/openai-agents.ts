/**
 * OpenAI Agents SDK (`@openai/agents`): a run whose tool approvals are decided in Countersign.
 *
 * A tool with `needsApproval` interrupts the run (`result.interruptions`). `runWithCountersign`
 * requests a Countersign approval for each interruption, waits for the decision, and answers the
 * SDK: approved → consume with the binding hash, then `state.approve(item)`; denied (or expired,
 * or not decided in time) → `state.reject(item, { message })` with the approver's reply, which the
 * model reads. Then it resumes the run from `result.state`, until no interruption is left.
 *
 * The SDK's approval cannot change a call's arguments, so an approver's edit is not run: the call
 * is rejected with a message naming the edited arguments (the model may call again with them),
 * and the edited approval is left unconsumed.
 *
 *   const result = await runWithCountersign(agent, "Deploy the site", { client, action: () => "exec" });
 */
import { type Agent, type RunResult, type RunToolApprovalItem, Runner } from "@openai/agents";
import type { Countersign } from "../../clients/ts/src/index";
import { consume, decide, type TGateOptions } from "./gate";

export type TAgentsOptions = TGateOptions & {
  client: Countersign;
  /** The Countersign action for an interrupted call (e.g. `exec`); its arguments default to the call's parsed JSON arguments. */
  action: (item: RunToolApprovalItem) => string;
  toArguments?: (item: RunToolApprovalItem) => Record<string, unknown>;
  /** The runner (default: a new `Runner()`). */
  runner?: Runner;
  /** At most this many rounds of interruptions (default 10). */
  maxRounds?: number;
};

// biome-ignore lint/suspicious/noExplicitAny: the SDK's own Agent type parameters
export async function runWithCountersign<A extends Agent<any, any>>(agent: A, input: string, options: TAgentsOptions): Promise<RunResult<unknown, A>> {
  const runner = options.runner ?? new Runner();
  const toArguments = options.toArguments ?? ((item: RunToolApprovalItem) => JSON.parse(item.arguments ?? "{}") as Record<string, unknown>);
  let result = await runner.run(agent, input);
  for (let round = 0; result.interruptions.length > 0; round++) {
    if (round >= (options.maxRounds ?? 10)) throw new Error("runWithCountersign: too many rounds of interruptions.");
    for (const item of result.interruptions) {
      const callId = "callId" in item.rawItem ? item.rawItem.callId : undefined;
      const decision = await decide(options.client, { action: options.action(item), arguments: toArguments(item), ...(callId ? { idempotencyKey: `openai-agents:${callId}` } : {}) }, options);
      if (decision.approved && !decision.edited) {
        await consume(options.client, decision);
        result.state.approve(item);
      } else if (decision.approved) {
        result.state.reject(item, { message: `The approver changed the arguments to ${JSON.stringify(decision.arguments)}; this call did not run.` });
      } else {
        result.state.reject(item, { message: decision.message });
      }
    }
    result = await runner.run(agent, result.state);
  }
  return result as RunResult<unknown, A>;
}
