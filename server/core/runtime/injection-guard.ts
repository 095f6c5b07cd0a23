import type { TPendingInputOptions } from "./pending-input";

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
  /** The steering message's own inbound context; never the initial turn's. */
  currentInboundContext?: string;
};

/** What `queueMessage` resolves to; `pending` means it returned early and settlement follows by callback. */
export type TQueueMessageResult = { accepted: boolean; outcome: TInjectionSettlement | "pending" };

/** One input as handed to the backend's dispatch port. */
export type TInjectionItem = {
  readonly id: string;
  readonly text: string;
  readonly authorityKind: TInjectionAuthorityKind;
  readonly currentInboundContext?: string;
  /** 1 for the first dispatch, then 2, 3… for retries. */
  readonly attempt: number;
  /** Re-runs the live-run and source check; call it again before the final write if dispatch awaits before I/O. */
  readonly assertCurrent: () => boolean;
};

/** The V2 active-run injection capability a backend advertises. */
export type TMessageInjectionV2 = {
  readonly version: 2;
  isAvailable: () => boolean;
  queueMessage: (text: string, options: TQueueMessageOptions, assertCurrent: TAssertCurrent, authorityKind: TInjectionAuthorityKind) => Promise<TQueueMessageResult>;
  claimPendingUserInputAnswer?: (
    text: string,
    options: TPendingInputOptions,
    assertCurrent: TAssertCurrent,
    authorityKind: TInjectionAuthorityKind,
  ) => Promise<"claimed" | "not-pending" | "rejected">;
  cancelPendingUserInput?: (resolvedBy: string, assertCurrent: TAssertCurrent, authorityKind: TInjectionAuthorityKind) => Promise<"cancelled" | "not-pending" | "rejected">;
};

/** A failure the queue absorbed and reported instead of throwing into the run. */
export type TInjectionFailure = {
  stage: "live-check" | "assertion" | "dispatch" | "callback";
  itemId?: string;
  error: unknown;
};

/** The verdict of one guarded check. */
export type TGuardVerdict = "current" | "run-ended" | "revoked";

/** The combined live-run and source check for one injection; revocation latches. */
export type TInjectionGuard = { check: () => TGuardVerdict; isRevoked: () => boolean };

/**
 * Binds one injection's assertion to the backend's live-run check. Once the assertion fails (or
 * throws) the guard stays revoked, and the assertion is remembered in `revokedAssertions` so the
 * same assertion offered again is refused too. A run that is not live does not revoke: the input
 * is simply not deliverable any more.
 */
export function createInjectionGuard(params: {
  isRunLive: () => boolean;
  assertCurrent: TAssertCurrent;
  revokedAssertions: WeakSet<TAssertCurrent>;
  report: (failure: TInjectionFailure) => void;
  itemId?: string;
}): TInjectionGuard {
  const { isRunLive, assertCurrent, revokedAssertions, report, itemId } = params;
  let revoked = revokedAssertions.has(assertCurrent);
  return {
    check() {
      if (revoked) return "revoked";
      let live = false;
      try {
        live = isRunLive() === true;
      } catch (error) {
        report({ stage: "live-check", itemId, error });
      }
      if (!live) return "run-ended";
      let current = false;
      try {
        current = assertCurrent() === true;
      } catch (error) {
        report({ stage: "assertion", itemId, error });
      }
      if (current) return "current";
      revoked = true;
      revokedAssertions.add(assertCurrent);
      return "revoked";
    },
    isRevoked: () => revoked,
  };
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

/** Calls a plugin or host callback, reporting instead of propagating its failure. */
export function callSafely(report: (failure: TInjectionFailure) => void, itemId: string | undefined, fn: () => void): void {
  try {
    fn();
  } catch (error) {
    report({ stage: "callback", itemId, error });
  }
}
