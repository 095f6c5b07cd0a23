import { AdmissionClosedError, AttemptRuntimeError } from "./errors";

/** Why an attempt is being cancelled. */
export const CANCELLATION_KINDS = ["user", "timeout", "revoked", "shutdown", "superseded"] as const;

export type TCancellationKind = (typeof CANCELLATION_KINDS)[number];

/** An explicit cancellation reason; `by` names the actor or subsystem that asked. */
export type TCancellationReason = { kind: TCancellationKind; message: string; by?: string };

/** The `signal.reason` of a cancelled attempt: an Error (so stacks and `instanceof` work) carrying the first reason. */
export class AttemptCancelledError extends AttemptRuntimeError {
  readonly reason: TCancellationReason;
  constructor(reason: TCancellationReason) {
    super("attempt_cancelled", reason.message);
    this.name = "AttemptCancelledError";
    this.reason = reason;
  }
}

/** Cancellation and admission control for one attempt. */
export type TAttemptCancellation = {
  /** Aborted on the first `cancel`, with an {@link AttemptCancelledError} as its reason. */
  readonly signal: AbortSignal;
  /**
   * Cancels the attempt and closes admission. The first reason wins; later reasons are kept in
   * `extraReasons()` but never replace it. Returns true only for the call that cancelled.
   */
  cancel: (reason: TCancellationReason) => boolean;
  /** The first explicit reason, or null while not cancelled. */
  reason: () => TCancellationReason | null;
  /** Reasons offered after the first one, in arrival order. */
  extraReasons: () => readonly TCancellationReason[];
  /** Closes admission at the terminal boundary without cancelling. Idempotent. */
  freeze: () => void;
  /** True while new work may still start. */
  isAdmissionOpen: () => boolean;
  /** Throws {@link AdmissionClosedError} once frozen or cancelled. */
  assertAdmissible: () => void;
  /** Runs `fn` only while admission is open; otherwise throws {@link AdmissionClosedError} without calling it. */
  admit: <T>(fn: () => T) => T;
};

/**
 * Creates the cancellation for one attempt. Admission is frozen either explicitly at the terminal
 * boundary or implicitly by the first cancellation, so late callbacks cannot start new work.
 */
export function createAttemptCancellation(): TAttemptCancellation {
  const controller = new AbortController();
  let first: TCancellationReason | null = null;
  const extra: TCancellationReason[] = [];
  let frozen = false;

  const assertAdmissible = (): void => {
    if (first) {
      throw new AdmissionClosedError(`The attempt was cancelled (${first.kind}: ${first.message}); no new work is admitted.`);
    }
    if (frozen) throw new AdmissionClosedError("The attempt reached its terminal boundary; no new work is admitted.");
  };

  return {
    signal: controller.signal,
    cancel(reason) {
      const copy = normalizeReason(reason);
      if (first) {
        extra.push(copy);
        return false;
      }
      first = copy;
      frozen = true;
      controller.abort(new AttemptCancelledError(copy));
      return true;
    },
    reason: () => first,
    extraReasons: () => [...extra],
    freeze() {
      frozen = true;
    },
    isAdmissionOpen: () => !frozen,
    assertAdmissible,
    admit(fn) {
      assertAdmissible();
      return fn();
    },
  };
}

function normalizeReason(reason: TCancellationReason): TCancellationReason {
  if (!(CANCELLATION_KINDS as readonly string[]).includes(reason.kind)) {
    throw new TypeError(`Unknown cancellation kind ${JSON.stringify(reason.kind)}; use one of ${CANCELLATION_KINDS.join(", ")}.`);
  }
  if (typeof reason.message !== "string" || reason.message.trim() === "") {
    throw new TypeError("A cancellation reason needs a message a person can read.");
  }
  const copy: TCancellationReason = { kind: reason.kind, message: reason.message };
  if (reason.by !== undefined) copy.by = reason.by;
  return Object.freeze(copy);
}
