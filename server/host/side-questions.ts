import type { TAgentConfig } from "../agents/types";
import type { TOutputItem } from "../core/envelope";
import { DomainError } from "../core/errors";
import type { TNewEvent } from "../core/frames";
import { newId } from "../core/ids";
import { boundAndRedact } from "../core/redact";
import type { TResponseStatus, TTransport } from "../core/vocabulary";
import type { TDeps } from "./deps";
import type { THarnesses } from "./harness-port";
import type { TSideQuestionCapabilities, TSideQuestionParams } from "../../plugin-sdk/side-questions";
import { recordEvents } from "./transact";

/**
 * How long a harness may take to answer one side question; past it the question's `signal`
 * aborts and the asker gets a `timeout` (the asker holds an open request meanwhile).
 */
export const SIDE_QUESTION_TIMEOUT_MS = 120_000;

const MAX_BUFFERED = 100;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Asks the run's harness a side question: the handler gets the question, a frozen copy of the
 * run's transcript so far and capabilities bound to this side question; nothing of the run
 * changes (no steering, no transcript item, no status). The question and its answer (or the
 * failure) are recorded in the run's trajectory as `side_question.answered` /
 * `side_question.failed`, with what the handler recorded, in one commit.
 */
export async function answerSideQuestion(
  deps: TDeps,
  harnesses: THarnesses,
  run: { id: string; sessionId: string; status: TResponseStatus; input: unknown; output: readonly TOutputItem[] },
  agent: Pick<TAgentConfig, "name" | "model" | "harness">,
  ask: { question: string; askedBy: string; via: TTransport; signal?: AbortSignal },
): Promise<{ id: string; responseId: string; question: string; answer: string }> {
  const harness = harnesses.find(agent.harness);
  const handler = harness?.sideQuestion;
  if (!handler) throw new DomainError("conflict", `The harness ${agent.harness} of agent ${agent.name} does not answer side questions.`);
  const id = newId("side");
  const timeout = AbortSignal.timeout(SIDE_QUESTION_TIMEOUT_MS);
  const signal = ask.signal ? AbortSignal.any([ask.signal, timeout]) : timeout;
  let settled = false;
  const closed = () => new DomainError("conflict", "This side question has settled; its host capabilities are closed.");
  const assertCurrent = () => {
    if (settled) throw closed();
    if (signal.aborted) throw new DomainError("conflict", "This side question was abandoned (its asker went away or it took too long).");
  };
  const buffered: TNewEvent[] = [];
  const event = (type: string, data: Record<string, unknown>): TNewEvent => ({ type, data, frame: false, actorUserId: ask.askedBy, transport: ask.via });
  const flush = async () => {
    const events = buffered.splice(0);
    if (events.length > 0) await recordEvents(deps, run.id, events);
  };
  const hostCapabilities: TSideQuestionCapabilities = Object.freeze({
    version: 2 as const,
    sideQuestionId: id,
    trajectory: Object.freeze({
      recordEvent: (type: string, data: Record<string, unknown>) => {
        assertCurrent();
        if (!/^[a-z][a-z0-9_.-]{0,63}$/.test(type)) throw new DomainError("invalid_request", "Trajectory event types are 1–64 lowercase letters, digits, dots, dashes or underscores.");
        buffered.push(event(`harness.${type}`, { sideQuestionId: id, ...(boundAndRedact(data) as Record<string, unknown>) }));
        if (buffered.length >= MAX_BUFFERED) void flush().catch((error: unknown) => deps.log.warn({ err: error }, "side question trajectory flush failed"));
      },
      flush: async () => {
        if (settled) return;
        await flush();
      },
    }),
    assertCurrent,
  });
  const params: TSideQuestionParams = {
    question: ask.question,
    run: { id: run.id, sessionId: run.sessionId, status: run.status, agent: { name: agent.name, model: agent.model } },
    askedBy: { id: ask.askedBy },
    transcript: deepFreeze({ input: structuredClone(run.input), items: structuredClone([...run.output]) }),
    signal,
    hostCapabilities,
  };
  const base = { sideQuestionId: id, question: boundAndRedact(ask.question), askedBy: ask.askedBy, harness: agent.harness };
  // The host's own refusals go out as they are; anything the handler threw is named as its failure.
  const own = new WeakSet<Error>();
  const ownError = (code: "timeout" | "conflict", message: string) => {
    const error = new DomainError(code, message);
    own.add(error);
    return error;
  };
  let answer: string;
  try {
    const aborted = new Promise<never>((_, reject) => {
      const fail = () => reject(ownError("timeout", `The harness ${agent.harness} did not answer the side question in time (or its asker went away).`));
      if (signal.aborted) fail();
      else signal.addEventListener("abort", fail, { once: true });
    });
    const result = await Promise.race([Promise.resolve().then(() => handler(params)), aborted]);
    if (!result || typeof result.text !== "string" || result.text.trim() === "") throw ownError("conflict", `The harness ${agent.harness} returned no answer to the side question.`);
    answer = result.text;
  } catch (error) {
    settled = true;
    const refusal = error instanceof DomainError && own.has(error) ? error : new DomainError("conflict", `The harness ${agent.harness} could not answer the side question: ${messageOf(error)}`);
    buffered.push(event("side_question.failed", { ...base, message: boundAndRedact(refusal.message) }));
    await flush().catch((recordError: unknown) => deps.log.warn({ err: recordError, responseId: run.id }, "a side question's failure could not be recorded"));
    throw refusal;
  }
  settled = true;
  buffered.push(event("side_question.answered", { ...base, answer: boundAndRedact(answer) }));
  await flush();
  return { id, responseId: run.id, question: ask.question, answer };
}
