/**
 * LangGraph JS (`@langchain/langgraph`): a graph `interrupt` answered from Countersign.
 *
 * Inside a node, `countersignInterrupt(client, { action, arguments })` pauses the graph with
 * `interrupt(...)`. The driver, `invokeWithCountersign`, finds each pending interrupt, requests a
 * Countersign approval for it, waits for the decision and resumes the graph with
 * `new Command({ resume: answer })` (a checkpointer, e.g. `MemorySaver`, keeps the paused state).
 * Back in the node, an approved answer is consumed with its binding hash before the node goes on,
 * and the node runs the approved arguments (an approver's edit included); a denial comes back as
 * `{ approved: false, message }` with the approver's reply.
 *
 * Use one `countersignInterrupt` per node: LangGraph runs a resumed node again from its start.
 */
import { Command, interrupt } from "@langchain/langgraph";
import type { Countersign, TApprovalRequest } from "../../clients/ts/src/index";
import { decide, type TGateOptions } from "./gate";

/** What the node's interrupt carries. */
export type TCountersignInterrupt = { countersign: TApprovalRequest };
/** What the graph is resumed with. */
export type TCountersignAnswer =
  | { approved: true; approvalId: string; bindingHash: string; arguments: Record<string, unknown>; edited: boolean }
  | { approved: false; approvalId: string; status: string; message: string };
export type TNodeDecision = { approved: true; arguments: Record<string, unknown>; edited: boolean } | { approved: false; message: string };

/** In a node: pause for a Countersign decision; on an approval, consume it and return the arguments to run. */
export async function countersignInterrupt(client: Countersign, request: TApprovalRequest): Promise<TNodeDecision> {
  const answer = interrupt<TCountersignInterrupt, TCountersignAnswer>({ countersign: request });
  if (!answer.approved) return { approved: false, message: answer.message };
  await client.approvals.consume(answer.approvalId, answer.bindingHash);
  return { approved: true, arguments: answer.arguments, edited: answer.edited };
}

type TInterrupt = { id?: string; value?: unknown };
type TConfig = { configurable: { thread_id: string } };
/** A compiled graph (with a checkpointer); `never` input accepts any graph's own input type. */
type TInvokable = { invoke: (input: never, config: TConfig) => Promise<unknown> };

/** Invokes the graph and answers its Countersign interrupts until it finishes (or pauses on another kind of interrupt). */
export async function invokeWithCountersign<S>(graph: TInvokable, input: unknown, config: TConfig, options: TGateOptions & { client: Countersign }): Promise<S> {
  const invoke = graph.invoke.bind(graph) as (input: unknown, config: TConfig) => Promise<S & { __interrupt__?: TInterrupt[] }>;
  let result = await invoke(input, config);
  for (;;) {
    const pending = (result.__interrupt__ ?? []).filter((i): i is { id: string; value: TCountersignInterrupt } => typeof i.value === "object" && i.value !== null && "countersign" in i.value);
    if (pending.length === 0) return result;
    const answers: Record<string, TCountersignAnswer> = {};
    for (const item of pending) {
      const request = { ...item.value.countersign, idempotencyKey: `langgraph:${config.configurable.thread_id}:${item.id}` };
      const decision = await decide(options.client, request, options);
      answers[item.id] = decision.approved
        ? { approved: true, approvalId: decision.approval.id, bindingHash: decision.approval.bindingHash, arguments: decision.arguments, edited: decision.edited }
        : { approved: false, approvalId: decision.approval.id, status: decision.status, message: decision.message };
    }
    const resume = pending.length === 1 ? answers[(pending[0] as { id: string }).id] : answers;
    result = await invoke(new Command({ resume }), config);
  }
}
