/** Which deadline elapsed. */
export type TAttemptTimeoutKind = "execution" | "settlement";

/** An opaque timer handle from the injected `setTimer`. */
export type TTimerHandle = unknown;

/** Options for {@link createAttemptDeadlineController}. */
export type TAttemptDeadlineOptions = {
  /** When the attempt originally started; a resumed attempt passes the original start, not now. */
  startedAtMs: number;
  /** Execution budget from `startedAtMs`; `Infinity` means no execution deadline. */
  timeoutMs: number;
  /** The backend's settlement budget, counted from the first `beginSettlement(receivedAtMs)`. */
  settlementTimeoutMs: number;
  /** Aborting it closes the controller. */
  signal?: AbortSignal;
  /** Called at most once per kind, never after the controller closed. */
  onTimeout: (kind: TAttemptTimeoutKind) => void;
  now?: () => number;
  setTimer?: (fn: () => void, delayMs: number) => TTimerHandle;
  clearTimer?: (handle: TTimerHandle) => void;
};

/** What the controller currently enforces. */
export type TAttemptDeadlineState = {
  executionDeadlineMs: number;
  settlementDeadlineMs: number | null;
  closed: boolean;
};

/** Absolute execution and settlement deadlines for one attempt. */
export type TAttemptDeadlineController = {
  /**
   * Starts the settlement deadline at `receivedAtMs + settlementTimeoutMs` and stops the execution
   * deadline. Only the first call counts: later calls never extend or move the deadline.
   */
  beginSettlement: (receivedAtMs: number) => void;
  /** Closes both deadlines; no callback fires afterwards. Idempotent. */
  dispose: () => void;
  state: () => TAttemptDeadlineState;
};

// Node's timers overflow above 2^31-1 ms and fire after 1 ms, so long deadlines are re-armed in chunks.
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/**
 * Creates the deadline controller for one attempt. Deadlines are absolute: they derive from the
 * original start and from the first settlement report, so neither retries nor repeated reports
 * extend them. Once settlement begins the execution deadline no longer applies.
 */
export function createAttemptDeadlineController(options: TAttemptDeadlineOptions): TAttemptDeadlineController {
  const { startedAtMs, timeoutMs, settlementTimeoutMs, signal, onTimeout } = options;
  assertFiniteNumber("startedAtMs", startedAtMs);
  assertBudget("timeoutMs", timeoutMs);
  assertBudget("settlementTimeoutMs", settlementTimeoutMs);
  const now = options.now ?? Date.now;
  const setTimer = options.setTimer ?? ((fn, delayMs) => setTimeout(fn, delayMs));
  const clearTimer = options.clearTimer ?? ((handle) => clearTimeout(handle as ReturnType<typeof setTimeout>));

  const executionDeadlineMs = startedAtMs + timeoutMs;
  let settlementDeadlineMs: number | null = null;
  let closed = false;
  const timers: Record<TAttemptTimeoutKind, TTimerHandle | null> = { execution: null, settlement: null };
  const fired: Record<TAttemptTimeoutKind, boolean> = { execution: false, settlement: false };

  const stop = (kind: TAttemptTimeoutKind): void => {
    const handle = timers[kind];
    timers[kind] = null;
    if (handle !== null) clearTimer(handle);
  };

  const arm = (kind: TAttemptTimeoutKind, deadlineMs: number): void => {
    if (closed || fired[kind] || deadlineMs === Number.POSITIVE_INFINITY) return;
    const delay = Math.min(Math.max(0, deadlineMs - now()), MAX_TIMER_DELAY_MS);
    timers[kind] = setTimer(() => {
      timers[kind] = null;
      // A clear that raced the callback, or a disposal, must not produce a late timeout.
      if (closed || fired[kind]) return;
      if (now() < deadlineMs) return arm(kind, deadlineMs);
      fired[kind] = true;
      onTimeout(kind);
    }, delay);
  };

  const onAbort = (): void => dispose();

  function dispose(): void {
    if (closed) return;
    closed = true;
    stop("execution");
    stop("settlement");
    signal?.removeEventListener("abort", onAbort);
  }

  if (signal?.aborted) {
    closed = true;
  } else {
    signal?.addEventListener("abort", onAbort, { once: true });
    arm("execution", executionDeadlineMs);
  }

  return {
    beginSettlement(receivedAtMs) {
      assertFiniteNumber("receivedAtMs", receivedAtMs);
      if (closed || settlementDeadlineMs !== null) return;
      settlementDeadlineMs = receivedAtMs + settlementTimeoutMs;
      stop("execution");
      arm("settlement", settlementDeadlineMs);
    },
    dispose,
    state: () => ({ executionDeadlineMs, settlementDeadlineMs, closed }),
  };
}

function assertFiniteNumber(name: string, value: number): void {
  if (!Number.isFinite(value)) throw new RangeError(`${name} must be a finite number of milliseconds, got ${String(value)}.`);
}

function assertBudget(name: string, value: number): void {
  if (Number.isNaN(value) || value < 0) throw new RangeError(`${name} must be zero or more milliseconds, got ${String(value)}.`);
}
