import { LifecycleTransitionError } from "./errors";
import { type TAttemptObserver, type TObserverErrorReporter, emitAttemptEvent } from "./events";

/** The phases of an attempt, in order; `suspended` sits beside `running`. */
export const ATTEMPT_PHASES = ["admitted", "preparing", "running", "suspended", "settling", "settled"] as const;

export type TAttemptPhase = (typeof ATTEMPT_PHASES)[number];

/** One emitted phase change. */
export type TAttemptLifecycleEvent = {
  type: "attempt.lifecycle";
  phase: TAttemptPhase;
  previousPhase: TAttemptPhase | null;
  atMs: number;
  data?: Record<string, unknown>;
};

/** Options for {@link createAttemptLifecycle}. */
export type TAttemptLifecycleOptions = {
  /** Receives each emitted phase; its failures are isolated and reported. */
  emit: TAttemptObserver<TAttemptLifecycleEvent>;
  onObserverError?: TObserverErrorReporter<TAttemptLifecycleEvent>;
  now?: () => number;
};

/** The gate every lifecycle event of one attempt passes through. */
export type TAttemptLifecycle = {
  /**
   * Moves to `phase` and emits it. Returns false (and emits nothing) when `phase` is already the
   * current phase. Throws {@link LifecycleTransitionError} for a backwards move, except that
   * `running` and `suspended` may alternate.
   */
  transition: (phase: TAttemptPhase, data?: Record<string, unknown>) => boolean;
  /** Whether `transition(phase)` would emit. */
  canTransition: (phase: TAttemptPhase) => boolean;
  /** The current phase, or null before `admitted`. */
  phase: () => TAttemptPhase | null;
  /** Resolves once every emitted event has been delivered; never rejects. */
  flush: () => Promise<void>;
};

// running and suspended share a rank: moving between them is the one allowed back-and-forth.
const RANK: Record<TAttemptPhase, number> = { admitted: 0, preparing: 1, running: 2, suspended: 2, settling: 3, settled: 4 };

/**
 * Creates the lifecycle gate for one attempt: admitted → preparing → running → (suspended ↔
 * running)* → settling → settled. Forward skips are allowed (a cancelled attempt may go from
 * admitted to settled); repeated reports of the current phase are deduplicated, so phases other
 * than running/suspended are emitted at most once and those two once per cycle.
 */
export function createAttemptLifecycle(options: TAttemptLifecycleOptions): TAttemptLifecycle {
  const now = options.now ?? Date.now;
  let current: TAttemptPhase | null = null;
  let deliveries: Promise<void> = Promise.resolve();

  const check = (phase: TAttemptPhase): "emit" | "duplicate" | "backwards" => {
    if (!Object.hasOwn(RANK, phase)) throw new TypeError(`Unknown attempt phase ${JSON.stringify(phase)}.`);
    if (current === phase) return "duplicate";
    if (current !== null && RANK[phase] < RANK[current]) return "backwards";
    return "emit";
  };

  return {
    transition(phase, data) {
      const verdict = check(phase);
      if (verdict === "duplicate") return false;
      if (verdict === "backwards") {
        throw new LifecycleTransitionError(`An attempt in phase ${current} cannot move back to ${phase}.`);
      }
      const event: TAttemptLifecycleEvent = { type: "attempt.lifecycle", phase, previousPhase: current, atMs: now() };
      if (data !== undefined) event.data = data;
      current = phase;
      const delivered = emitAttemptEvent([options.emit], event, options.onObserverError);
      deliveries = Promise.all([deliveries, delivered]).then(() => undefined);
      return true;
    },
    canTransition: (phase) => check(phase) === "emit",
    phase: () => current,
    flush: () => deliveries,
  };
}
