/**
 * The attempt-runtime types the plugin contract names (output-token reports, guarded injection,
 * the terminal-outcome classifier, tool-result middleware), restated here so the SDK stands alone.
 * Their definitions are the server's (server/core/runtime); server/plugins/sdk-contract.test.ts
 * fails the type check when the two drift apart.
 */

/**
 * Reports one completed model response's output tokens (not a cumulative total). Returns true
 * when the report was counted and published; false when the count is invalid or the capability
 * is closed or superseded. It never throws.
 */
export type TReportOutputTokens = (outputTokens: number) => boolean;

/** Whose authority an injection carries: the run alone, or also a source whose lifetime constrains dispatch. */
export type TInjectionAuthorityKind = "run" | "source-bound";

/** How one injected input ended; reported exactly once through `onQueueSettled`. */
export type TInjectionSettlement = "committed" | "cancelled" | "rejected";

/**
 * The host-owned assertion for one injection. Only a literal `true` counts as current: false,
 * any other value, or a throw revokes the injection.
 */
export type TAssertCurrent = () => boolean;

/** Options for one queued input. */
export type TQueueMessageOptions = {
  /** Reports admission only: true once the input is in the queue, false when it was refused. */
  onQueueAccepted?: (accepted: boolean) => void;
  /** Called exactly once, when the input commits, is cancelled, or is terminally rejected. */
  onQueueSettled?: (outcome: TInjectionSettlement) => void;
  /** Default true: `queueMessage` resolves at settlement. False resolves at admission. */
  waitForTranscriptCommit?: boolean;
};

/** What `queueMessage` resolves to; `pending` means it returned early and settlement follows by callback. */
export type TQueueMessageResult = { accepted: boolean; outcome: TInjectionSettlement | "pending" };

/** Which pending question a claim targets; omitted: the question the run waits on now. */
export type TPendingInputOptions = { questionId?: string };

/**
 * How a claim of the run's pending input ended. `answered`: the text committed as the answer
 * (with this input's receipt). `none`: the run waits on no question (or not on the one named);
 * nothing was used. `rejected`: a definitive refusal (the assertion failed, the run stopped
 * waiting, someone settled the question first, or it needs more than a text reply); the question
 * is unchanged.
 */
export type TPendingInputClaim =
  | { status: "answered"; questionId: string; resolutionId: string }
  | { status: "none" }
  | { status: "rejected"; questionId: string | null; reason: string; message: string };

/** How a cancellation of the run's pending input ended (`none` and `rejected` as for a claim). */
export type TPendingInputCancel =
  | { status: "cancelled"; questionId: string }
  | { status: "none" }
  | { status: "rejected"; questionId: string | null; reason: string; message: string };

/**
 * The V2 active-run injection capability the host gives a harness (the seed's
 * `messageInjectionV2`): guarded steering, and the claim or cancellation of the input the run is
 * waiting on. Every method takes the host-side assertion and authority kind of that one input.
 */
export type TMessageInjectionV2 = {
  readonly version: 2;
  isAvailable: () => boolean;
  queueMessage: (text: string, options: TQueueMessageOptions, assertCurrent: TAssertCurrent, authorityKind: TInjectionAuthorityKind) => Promise<TQueueMessageResult>;
  /**
   * Answers the question the run waits on with `text`, as plain text into its session would (one
   * free-text question only). `assertCurrent` (and, for `source-bound`, the run's source) is
   * checked synchronously right before the claim commits, with no await between.
   */
  claimPendingUserInputAnswer: (text: string, options: TPendingInputOptions, assertCurrent: TAssertCurrent, authorityKind: TInjectionAuthorityKind) => Promise<TPendingInputClaim>;
  /** Cancels the question the run waits on, recorded as resolved by `resolvedBy`; the same checks at the same boundary. */
  cancelPendingUserInput: (resolvedBy: string, assertCurrent: TAssertCurrent, authorityKind: TInjectionAuthorityKind) => Promise<TPendingInputCancel>;
};

/** How a completed turn without visible assistant text ended; null when it needs no fallback. */
export type TTerminalOutcome = "empty" | "reasoning-only" | "planning-only";

/** What the harness observed for the completed turn. */
export type TTerminalOutcomeInput = {
  visibleText: string;
  reasoningText?: string | null;
  /** The harness's explicit plan field; plans are never inferred from prose. */
  planText?: string | null;
  /** Any value other than undefined/null means the prompt failed; those are not classified here. */
  promptError?: unknown;
  /** The turn has not completed yet. */
  inFlight?: boolean;
  /** The agent chose not to reply. */
  silentReply?: boolean;
};

/** Classifies a completed turn that produced no visible assistant text (`hostCapabilities.classifyTerminalOutcome`). */
export type TClassifyTerminalOutcome = (input: TTerminalOutcomeInput) => TTerminalOutcome | null;

/** A tool's result as the harness is about to feed it back to the model. */
export type TToolResultInput = { toolName: string; callId: string; result: unknown; isError: boolean };

/** What a middleware sees: the result so far, its runtime, and the untouched original. */
export type TToolResultMiddlewareEvent = TToolResultInput & {
  runtimeId: string;
  original: Readonly<TToolResultInput>;
};

/** A replacement result; `isError: true` marks a failure, but middleware cannot clear an original one. */
export type TToolResultPatch = { result: unknown; isError?: boolean };

/** An async tool-result transform; returning undefined keeps the result unchanged. */
export type TToolResultMiddleware = (event: TToolResultMiddlewareEvent) => TToolResultPatch | undefined | Promise<TToolResultPatch | undefined>;

/** Which runtimes and tools one registration targets. */
export type TToolResultMiddlewareOptions = {
  /** A subset of the manifest's declared runtimes; omitted means every supported declared runtime. */
  runtimes?: readonly string[];
  /** Canonical tool ids; omitted means every tool. */
  matcher?: readonly string[];
};
