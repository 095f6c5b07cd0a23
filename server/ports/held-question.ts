import type { TAnswers, TQuestion } from "../core/questions/schema";

/** How a question asked during a tool call settled. */
export type TToolAskOutcome =
  | { status: "answered"; questionId: string; answers: TAnswers }
  /** A person cancelled it (the answer page's "decline"). */
  | { status: "declined"; questionId: string }
  | { status: "expired"; questionId: string }
  /** The run or the asker went away (or the run was no longer executing): nobody can answer any more. */
  | { status: "aborted"; questionId: string | null };

/**
 * The held-question protocol as a running tool call is given it (types only; implemented by
 * server/host/pending/ask-during-tool.ts, bound to the call by server/host/mcp-tools.ts): asks a
 * person while the call stays in flight and the run shows `requires_action`, and waits until the
 * question settles, expires or `signal` aborts.
 */
export type TAskDuringTool = (questions: TQuestion[], options: { timeoutMs: number; signal: AbortSignal }) => Promise<TToolAskOutcome>;

/** The value of a secret answer of a question this call asked, for the tool only (records, frames and the model keep "stored"). */
export type TSecretAnswer = (questionId: string, answerKey: string) => Promise<string | null>;
