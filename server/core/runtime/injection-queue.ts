import { InjectionRevokedError } from "./errors";
import {
  assertInjectionRequest,
  callSafely,
  createInjectionGuard,
  type TAssertCurrent,
  type TInjectionAuthorityKind,
  type TInjectionFailure,
  type TInjectionGuard,
  type TInjectionItem,
  type TInjectionSettlement,
  type TMessageInjectionV2,
  type TQueueMessageOptions,
} from "./injection-guard";
import { runGuardedPendingInput, type TPendingInputPort } from "./pending-input";

/** Options for {@link createInjectionQueue}; give `dispatch` (one item per call) or `dispatchBatch`. */
export type TInjectionQueueOptions = {
  isRunLive: () => boolean;
  /**
   * Delivers one item. It must start provider I/O before its first await, or call
   * `item.assertCurrent()` again right before its final write and throw InjectionRevokedError when false.
   */
  dispatch?: (item: TInjectionItem) => Promise<void>;
  /** Delivers a batch of items that all passed their checks together; same final-write rule as `dispatch`. */
  dispatchBatch?: (items: readonly TInjectionItem[]) => Promise<void>;
  /** Total dispatch attempts per item, first included. Default 1 (no retry). */
  maxDispatchAttempts?: number;
  isRetryable?: (error: unknown) => boolean;
  /** Default true: drain on a microtask after each admission. False: the backend calls `drain()` at its boundaries. */
  autoDrain?: boolean;
  /** When given, the handle offers the V2 pending-input claim and cancellation. */
  pendingInput?: TPendingInputPort;
  onError?: (failure: TInjectionFailure) => void;
  newId?: () => string;
};

/** The backend's side of the queue: the handle it advertises plus its own controls. */
export type TInjectionQueue = {
  handle: TMessageInjectionV2;
  /** Delivers everything queued; single-flight, never rejects. */
  drain: () => Promise<void>;
  /** Refuses new input and cancels queued input; a dispatch in flight keeps its own outcome. */
  close: () => void;
  size: () => number;
};

const alwaysCurrent: TAssertCurrent = () => true;

type TQueued = {
  id: string;
  text: string;
  authorityKind: TInjectionAuthorityKind;
  options: TQueueMessageOptions;
  guard: TInjectionGuard;
  settled: boolean;
  resolve: (outcome: TInjectionSettlement) => void;
};

/**
 * Creates a guarded (V2) active-run injection queue. Each input's assertion is checked together
 * with the live-run check, synchronously, right before the queue mutation and right before each
 * dispatch or retry. A failed check revokes that input for good; other inputs are unaffected.
 */
export function createInjectionQueue(options: TInjectionQueueOptions): TInjectionQueue {
  const { isRunLive, pendingInput } = options;
  if (!options.dispatch === !options.dispatchBatch) throw new TypeError("Give exactly one of dispatch or dispatchBatch.");
  const dispatchItems = options.dispatchBatch ?? (([item]: readonly TInjectionItem[]) => options.dispatch!(item!));
  const batchSize = options.dispatchBatch ? Number.POSITIVE_INFINITY : 1;
  const maxAttempts = options.maxDispatchAttempts ?? 1;
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) throw new RangeError("maxDispatchAttempts must be a whole number of at least 1.");
  const isRetryable = options.isRetryable ?? (() => true);
  let counter = 0;
  const newId = options.newId ?? (() => `injection_${++counter}`);
  const revokedAssertions = new WeakSet<TAssertCurrent>();
  let queue: TQueued[] = [];
  let closed = false;
  let draining: Promise<void> | null = null;

  const report = (failure: TInjectionFailure): void => {
    try {
      options.onError?.(failure);
    } catch {
      // Diagnostics only; a failing reporter must not change any input's outcome.
    }
  };
  const guardFor = (assertCurrent: TAssertCurrent, itemId?: string) => createInjectionGuard({ isRunLive, assertCurrent, revokedAssertions, report, itemId });

  const settle = (item: TQueued, outcome: TInjectionSettlement): void => {
    if (item.settled) return;
    item.settled = true;
    callSafely(report, item.id, () => item.options.onQueueSettled?.(outcome));
    item.resolve(outcome);
  };

  const view = (item: TQueued, attempt: number): TInjectionItem => ({
    id: item.id,
    text: item.text,
    authorityKind: item.authorityKind,
    attempt,
    assertCurrent: () => item.guard.check() === "current",
    ...(item.options.currentInboundContext === undefined ? {} : { currentInboundContext: item.options.currentInboundContext }),
  });

  async function deliver(batch: TQueued[]): Promise<void> {
    let live = batch;
    for (let attempt = 1; ; ) {
      // Every item is revalidated with no await between its check and the dispatch call below.
      live = live.filter((item) => {
        const verdict = closed ? "run-ended" : item.guard.check();
        if (verdict === "current") return true;
        settle(item, verdict === "revoked" ? "rejected" : "cancelled");
        return false;
      });
      if (live.length === 0) return;
      try {
        await dispatchItems(live.map((item) => view(item, attempt)));
      } catch (error) {
        report({ stage: "dispatch", itemId: live.length === 1 ? live[0]?.id : undefined, error });
        const revoked = live.filter((item) => item.guard.isRevoked());
        for (const item of revoked) settle(item, "rejected");
        live = live.filter((item) => !item.settled);
        // A revocation inside dispatch is not the other items' failure: retry them without spending an attempt.
        if (error instanceof InjectionRevokedError && revoked.length > 0) continue;
        if (attempt >= maxAttempts || !isRetryable(error)) {
          for (const item of live) settle(item, "rejected");
          return;
        }
        attempt += 1;
        continue;
      }
      for (const item of live) settle(item, "committed");
      return;
    }
  }

  function drain(): Promise<void> {
    if (draining) return draining;
    if (queue.length === 0) return Promise.resolve();
    draining = (async () => {
      try {
        while (queue.length > 0) await deliver(queue.splice(0, batchSize));
      } finally {
        draining = null;
      }
    })();
    return draining;
  }

  const handle: TMessageInjectionV2 = {
    version: 2,
    isAvailable: () => !closed && guardFor(alwaysCurrent).check() === "current",
    async queueMessage(text, messageOptions, assertCurrent, authorityKind) {
      assertInjectionRequest(assertCurrent, authorityKind);
      if (typeof text !== "string") throw new TypeError("An injected message must be text.");
      const id = newId();
      let resolve: (outcome: TInjectionSettlement) => void = () => {};
      const done = new Promise<TInjectionSettlement>((r) => {
        resolve = r;
      });
      const item: TQueued = { id, text, authorityKind, options: messageOptions ?? {}, guard: guardFor(assertCurrent, id), settled: false, resolve };
      // The admission check and the queue mutation happen in one synchronous block.
      if (closed || item.guard.check() !== "current") {
        callSafely(report, id, () => item.options.onQueueAccepted?.(false));
        settle(item, "rejected");
        return { accepted: false, outcome: "rejected" };
      }
      queue.push(item);
      callSafely(report, id, () => item.options.onQueueAccepted?.(true));
      if (options.autoDrain !== false) queueMicrotask(() => void drain());
      if (item.options.waitForTranscriptCommit === false) return { accepted: true, outcome: "pending" };
      return { accepted: true, outcome: await done };
    },
  };

  if (pendingInput) {
    handle.claimPendingUserInputAnswer = async (text, inputOptions, assertCurrent, authorityKind) => {
      assertInjectionRequest(assertCurrent, authorityKind);
      if (closed) return "rejected";
      const outcome = await runGuardedPendingInput(guardFor(assertCurrent), (commit) =>
        pendingInput.claim({ text, options: inputOptions ?? {}, authorityKind }, commit),
      );
      return outcome === "done" ? "claimed" : outcome;
    };
    handle.cancelPendingUserInput = async (resolvedBy, assertCurrent, authorityKind) => {
      assertInjectionRequest(assertCurrent, authorityKind);
      if (closed) return "rejected";
      const outcome = await runGuardedPendingInput(guardFor(assertCurrent), (commit) => pendingInput.cancel({ resolvedBy, authorityKind }, commit));
      return outcome === "done" ? "cancelled" : outcome;
    };
  }

  return {
    handle,
    drain,
    close() {
      closed = true;
      const cancelled = queue;
      queue = [];
      for (const item of cancelled) settle(item, "cancelled");
    },
    size: () => queue.length,
  };
}
