/**
 * Side questions (plugin API 1.2): a person asks a run's harness something beside the run (a
 * "by the way" question) without steering it or changing its transcript. server/host/side-questions.ts
 * answers them.
 */
import type { TOutputItem, TResponseStatus } from "./wire";

/** The run's transcript as a side question sees it: read-only (frozen copies), never the run's own state. */
export type TSideQuestionTranscript = {
  /** The run's input as the caller sent it. */
  readonly input: unknown;
  /** The run's output items so far (messages, tool calls and results, attachments), in order. */
  readonly items: readonly TOutputItem[];
};

/**
 * The host capabilities of one side question (version 2), bound to it and to its run. Every call
 * after the side question settled (answered, failed, aborted) fails closed.
 */
export type TSideQuestionCapabilities = {
  readonly version: 2;
  readonly sideQuestionId: string;
  /** Structured, non-secret facts, recorded as `harness.<type>` (with the side question's id) together with its answer. */
  trajectory: { recordEvent: (type: string, data: Record<string, unknown>) => void; flush: () => Promise<void> };
  /** Throws once the side question settled or its `signal` aborted: call it before each side effect. */
  assertCurrent: () => void;
};

/** What a harness's side-question handler receives (`AgentHarnessSideQuestionParamsV2`). */
export type TSideQuestionParams = {
  /** The person's question, as asked. */
  question: string;
  /** The run the question is beside: its id, session, status when asked and agent. */
  run: { id: string; sessionId: string; status: TResponseStatus; agent: { name: string; model: string } };
  /** Who asked (a profile id: the run's owner, or a decider of another profile where the harness allows it). */
  askedBy: { id: string };
  transcript: TSideQuestionTranscript;
  /** Aborted when the asker goes away or after SIDE_QUESTION_TIMEOUT_MS (120 s). */
  signal: AbortSignal;
  hostCapabilities: TSideQuestionCapabilities;
};

/** A side question's answer: plain text for the person; it never enters the run's transcript. */
export type TSideQuestionAnswer = { text: string };

export type TSideQuestionHandler = (params: TSideQuestionParams) => Promise<TSideQuestionAnswer>;

