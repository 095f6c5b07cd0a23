/**
 * The authority capabilities of a harness attempt (plugin API 1.1): the question dispatcher,
 * retained source authority, native subagent admission, compaction and async work resources.
 * server/host/authority.ts builds them.
 */
import type { TAnswers, TQuestion } from "./wire";

/**
 * Whose lifetime constrains an input. `unscoped`: only the run's own lifetime (ordinary input).
 * `source-bound`: also `assertCurrent`, a synchronous host-side check called with no await
 * between it and the dispatch (and every retry); false or a throw refuses the input.
 */
export type TQuestionAuthority = { kind: "unscoped" } | { kind: "source-bound"; assertCurrent: () => boolean };

/** How a question a harness asked settled. */
export type TQuestionAskOutcome =
  | { status: "answered"; questionId: string; answers: TAnswers }
  | { status: "declined"; questionId: string }
  | { status: "expired"; questionId: string }
  /** The run went away (cancelled, timed out) or was not executing: nobody can answer any more. */
  | { status: "aborted"; questionId: string | null };

/**
 * How an input a harness dispatched as a question's answer ended. `answered`: the host holds
 * this input's own receipt. `rejected`: a definitive refusal (the input is released; the question
 * is unchanged). `not_consumed`: the response was lost and the question was then cancelled or
 * expired. `unconfirmed`: the response was lost and no receipt of this input turned up before
 * the waiter's deadline; the host records it and the input is never replayed.
 */
export type TQuestionSubmitOutcome =
  | { status: "answered"; questionId: string; resolutionId: string }
  | { status: "rejected"; questionId: string; reason: string; message: string }
  | { status: "not_consumed"; questionId: string }
  | { status: "unconfirmed"; questionId: string; resolutionId: string };

/** The question dispatcher (version 2): every request names its authority. */
export type TQuestionDispatcher = {
  readonly version: 2;
  /**
   * Asks the run's owner 1 to 3 questions. The run turns `requires_action` with a question
   * (answered through `/v1` — `POST /v1/gateway/question.resolve` — or the console's answer
   * page) while this call waits; the answer comes back here and the run executes again. A
   * `source-bound` question accepts an answer only while `assertCurrent()` holds, checked right
   * before the answer commits; a refused answer leaves the question pending.
   */
  ask: (request: { questions: TQuestion[]; timeoutMs?: number; authority: TQuestionAuthority; signal?: AbortSignal }) => Promise<TQuestionAskOutcome>;
  /**
   * Dispatches an input the harness received (from its own channel) as the answer of a pending
   * question of this run, as the run's owner, with a fresh receipt. The authority (and the run's
   * liveness) is checked synchronously right before the commit. When `signal` aborts before the
   * response arrives, the response counts as lost: the host waits (within the question's own
   * deadline) for this input's receipt; without it the input is `unconfirmed` and never replayed.
   */
  submit: (request: { questionId: string; answers: TAnswers; authority: TQuestionAuthority; signal?: AbortSignal }) => Promise<TQuestionSubmitOutcome>;
};

/**
 * The source authority of a run, retained for native work that outlives the foreground turn. It
 * grants no tool authority: bind it to the resources the run admitted, call `assertCurrent()`
 * before each further side effect, stop them when `signal` aborts, and `release()` once they
 * settled (idempotent). It ends when the run's source is revoked: the run is cancelled (by a
 * person or its deadline), fails, or its attempt is torn down by a shutdown, or the credential
 * that started the run ends (its API key revoked, its console session signed out, its owner
 * disabled or deleted); a run that completes keeps its retained source until released.
 */
export type TRetainedSourceAuthority = {
  /** Throws a sentence once the source was revoked or this handle released. */
  assertCurrent: () => void;
  /** Aborted when the source is revoked (not on release). */
  readonly signal: AbortSignal;
  release: () => void;
};

/** What a native subagent spawn asks for. */
export type TSubagentSpawnRequest = {
  /** The agent the child runs (one this host serves). */
  agent: string;
  input: unknown;
  /** The requester the harness names: the verified requester's profile id (`requesterProfile().id`). */
  user: string;
  /** Re-checked synchronously right before the child is admitted (after every await); its string is a model-visible refusal. */
  guard?: () => string | null | undefined;
};

export type TSubagentSpawnOutcome =
  | { status: "admitted"; responseId: string; sessionId: string; parentResponseId: string }
  | { status: "refused"; reason: string };

export type TSubagentCapabilities = {
  /** The verified requester of this run (its owner): the only `user` a spawn may name. */
  requesterProfile: () => { id: string };
  /** Native spawn admission: refuses ambiguous identities; an admitted child runs as the requester and records its parent. */
  spawn: (request: TSubagentSpawnRequest) => Promise<TSubagentSpawnOutcome>;
};

/** What the host gives a compaction while it runs. */
export type TCompactParams = {
  /** Throws once the attempt may no longer act (cancelled, settled): call it before each side effect. */
  assertActive: () => void;
  /** The run's source, retained by the host for the whole compaction (released after it). */
  retainSourceAuthority: () => TRetainedSourceAuthority;
  signal: AbortSignal;
};

export type TCompactResult = { summary: string; tokensBefore?: number; tokensAfter?: number };

/** An owned resource of async work: its cleanup, and whether the result waits for it. */
export type TAsyncWorkResource = {
  cleanup: () => void | Promise<void>;
  /** The result is returned only after this resource's cleanup finished (when the work ended normally). */
  releaseBeforeResultWhenIdle?: boolean;
  /** Named in the trajectory when its cleanup fails. */
  name?: string;
};

export type TAsyncWorkContext = {
  /** Registers an acquired resource: its cleanup runs when the work ends (immediately on failure or abort). */
  onAcquired: (resource: TAsyncWorkResource) => void;
  /** Aborted when the run is cancelled; stays wired to the resources until their cleanup released them. */
  signal: AbortSignal;
  /** Throws once the run's source was revoked: queued work re-checks it before acting. */
  assertCurrent: () => void;
};

/** The authority capabilities every attempt receives (`hostCapabilities`), bound to the admitted run. */
/** What a harness asks the configured exec reviewer about: the exact command it would run itself. */
export type TExecReviewRequest = {
  command: string;
  /** The working directory, relative to the session workspace or absolute; omitted: the workspace. */
  cwd?: string;
  /** Environment variables the command would get (shown to the reviewer with the command). */
  env?: Readonly<Record<string, string>>;
  /** Why the agent wants it: recent conversation or the model's stated purpose (bounded by the host). */
  reason?: string;
};

/**
 * The seed's `ExecAutoReviewDecision`. Handle all three outcomes: `allow-once` (risk `low` or
 * `medium`): run the reviewed command once, under the current policy; `deny`: do not run it, give
 * the model `rationale` and `guidance`, never turn it into a person's approval; `ask`: a person
 * decides (ask through your own approval path; the host never runs the command for you). No
 * reviewer, a provider failure, a timeout, an invalid answer and a high-risk allow are `ask`.
 */
export type TExecAutoReviewDecision =
  | { decision: "allow-once"; risk: "low" | "medium"; rationale: string; reviewer: string; latencyMs: number }
  | { decision: "deny"; risk: "low" | "medium" | "high"; rationale: string; guidance: string; reviewer: string; latencyMs: number }
  | { decision: "ask"; risk: "low" | "medium" | "high" | null; rationale: string; reviewer: string; latencyMs: number };

export type THostAuthorityCapabilities = {
  questions: TQuestionDispatcher;
  /**
   * Asks the installation's configured exec reviewer about a command the harness runs with its own
   * exec tool (the seed's `reviewExecRequestWithConfiguredModel`). The verdict is recorded in the
   * run's trajectory as a `review.verdict` frame, as for the host's own `exec`. Throws after the
   * attempt settled; an error is never permission to run.
   */
  reviewExec: (request: TExecReviewRequest) => Promise<TExecAutoReviewDecision>;
  /** Retains the run's source for native work that outlives the foreground turn (see {@link TRetainedSourceAuthority}). */
  retainSourceAuthority: () => TRetainedSourceAuthority;
  subagents: TSubagentCapabilities;
  /** Runs a compaction with `assertActive` and the retained source; records it in the trajectory. */
  compact: (run: (params: TCompactParams) => Promise<TCompactResult>) => Promise<TCompactResult>;
  /** Runs native async work with host-owned cleanup of the resources it acquires. */
  runWithAsyncWorkResources: <T>(fn: (ctx: TAsyncWorkContext) => Promise<T>) => Promise<T>;
};
