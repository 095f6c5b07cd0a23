/** Whose authority an injection carries: the run alone, or also a source whose lifetime constrains dispatch. */
export const INJECTION_AUTHORITY_KINDS = ["run", "source-bound"] as const;

export type TInjectionAuthorityKind = (typeof INJECTION_AUTHORITY_KINDS)[number];

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

/** Runs an assertion synchronously: only a literal true is current; a throw is a revocation. */
export function isAssertionCurrent(assertCurrent: TAssertCurrent): boolean {
  try {
    return assertCurrent() === true;
  } catch {
    return false;
  }
}

/** Throws a TypeError for a request that does not carry a usable assertion and authority kind. */
export function assertInjectionRequest(assertCurrent: unknown, authorityKind: unknown): void {
  if (typeof assertCurrent !== "function") {
    throw new TypeError("A V2 injection needs the host's assertCurrent function for this input.");
  }
  if (!(INJECTION_AUTHORITY_KINDS as readonly unknown[]).includes(authorityKind)) {
    throw new TypeError(`authorityKind must be "run" or "source-bound", got ${JSON.stringify(authorityKind)}.`);
  }
}

/** The verdict of one guarded check: `unheld` when this process keeps no assertion for the item. */
export type TGuardVerdict = "current" | "revoked" | "unheld";

/**
 * The assertions of the queued injections one process holds, checked synchronously at each
 * guarded boundary (before the queue mutation, before each dispatch and before each retry). A
 * failed check latches: the same item is never current again, even if its source later looks
 * current. One item's revocation never touches another's verdict.
 */
export type TInjectionGuard = {
  hold: (id: string, assertCurrent: TAssertCurrent) => void;
  /** Forgets the item (its outcome is stored); a later check of it is `unheld`. */
  release: (id: string) => void;
  check: (id: string) => TGuardVerdict;
  isRevoked: (id: string) => boolean;
  /** Splits items, in order, into those still current and those revoked now or before. */
  split: <T extends { id: string }>(items: readonly T[]) => { current: T[]; revoked: T[] };
};

/** Creates an empty {@link TInjectionGuard}. */
export function createInjectionGuard(): TInjectionGuard {
  const held = new Map<string, TAssertCurrent>();
  const revoked = new Set<string>();
  const check = (id: string): TGuardVerdict => {
    if (revoked.has(id)) return "revoked";
    const assertCurrent = held.get(id);
    if (!assertCurrent) return "unheld";
    if (isAssertionCurrent(assertCurrent)) return "current";
    revoked.add(id);
    return "revoked";
  };
  return {
    hold: (id, assertCurrent) => void held.set(id, assertCurrent),
    release: (id) => {
      held.delete(id);
      revoked.delete(id);
    },
    check,
    isRevoked: (id) => revoked.has(id),
    split: (items) => {
      const current: (typeof items)[number][] = [];
      const gone: (typeof items)[number][] = [];
      for (const item of items) (check(item.id) === "revoked" ? gone : current).push(item);
      return { current, revoked: gone };
    },
  };
}
