import {
  type TAgentEndHook,
  type TAttemptLifecycle,
  type TAttemptLifecycleEvent,
  type TAttemptObserver,
  createAttemptDeadlineController,
  createAttemptLifecycle,
  emitAttemptEvent,
} from "../core/runtime";
import { recordEvents } from "./transact";
import type { TAgentEndPayload } from "../agents/types";
import type { Attempt } from "./attempt";
import type { TDeps } from "./deps";


export type TAttemptClock = {
  lifecycle: TAttemptLifecycle;
  /** Starts the absolute settlement deadline (only the first call counts). */
  beginSettlement: () => void;
  /** Closes the deadlines; observers get their events without being awaited. */
  close: () => Promise<void>;
};

const DEFAULT_EXECUTION_TIMEOUT_MS = 30 * 60_000;
const DEFAULT_SETTLEMENT_TIMEOUT_MS = 30_000;

/** The execution timeout of an attempt: the script's `timeoutMs`, else the agent's, else 30 minutes. */
function executionTimeoutOf(attempt: Attempt): number {
  const input = attempt.input as { timeoutMs?: unknown } | null;
  if (input && typeof input === "object" && typeof input.timeoutMs === "number") return input.timeoutMs;
  return attempt.agent.executionTimeoutMs ?? DEFAULT_EXECUTION_TIMEOUT_MS;
}

/**
 * Gates the attempt's lifecycle events (deduplicated per phase, recorded in the trajectory with
 * the attempt's next commit, delivered to observers whose failures are isolated) and arms its
 * deadlines. The execution timeout counts from the run's original start: a resumed attempt
 * starts with the time the run already executed (stored at each suspension; waits for people are
 * not counted), so the deadline is the same whichever replica resumes it. The settlement
 * deadline bounds finalization.
 */
export function startAttemptClock(deps: TDeps, attempt: Attempt, observers: readonly TAttemptObserver<TAttemptLifecycleEvent & { responseId: string }>[]): TAttemptClock {
  const responseId = attempt.response.id;
  const lifecycle = createAttemptLifecycle({
    emit: async (event) => {
      try {
        attempt.capabilities.trajectory.recordEvent("attempt.phase", { phase: event.phase, previousPhase: event.previousPhase });
      } catch {}
      await emitAttemptEvent(observers, { ...event, responseId }, (error, { index }) => {
        deps.log.warn({ err: error, responseId, observer: index }, "a lifecycle observer failed; the attempt goes on");
      });
    },
  });
  lifecycle.transition("admitted");
  const timeoutMs = executionTimeoutOf(attempt);
  const deadline = createAttemptDeadlineController({
    startedAtMs: Date.now() - attempt.response.activeMs,
    timeoutMs,
    settlementTimeoutMs: attempt.agent.settlementTimeoutMs ?? DEFAULT_SETTLEMENT_TIMEOUT_MS,
    signal: attempt.signal,
    onTimeout: (kind) =>
      attempt.runtime.cancellation.cancel({
        kind: "timeout",
        message: kind === "execution" ? `The response ran past its execution timeout of ${timeoutMs} ms.` : "Finalizing the response took longer than its settlement deadline.",
      }),
  });
  return {
    lifecycle,
    beginSettlement: () => {
      deadline.beginSettlement(Date.now());
      if (lifecycle.canTransition("settling")) lifecycle.transition("settling");
    },
    close: async () => {
      deadline.dispose();
      // Observers get every event (their failures are isolated) but are never awaited: an observer
      // that hangs must not hold the lease, the settlement or a resumed attempt of this response.
      void lifecycle.flush();
    },
  };
}

/**
 * After a response is finalized (its envelope, transcript anchor and lease release committed
 * together): closes the attempt and starts the agent's agent_end hooks without waiting; hook
 * failures are recorded and never change the result. Later capability calls fail closed.
 */
export async function settleAttempt(deps: TDeps, attempt: Attempt, clock: TAttemptClock, hooks: readonly TAgentEndHook<TAgentEndPayload>[]): Promise<void> {
  if (clock.lifecycle.canTransition("settled")) clock.lifecycle.transition("settled");
  await clock.close();
  attempt.close();
  attempt.runtime.cancellation.freeze();
  const r = attempt.response;
  const payload = { event: { responseId: r.id, sessionId: r.sessionId, agent: r.agent }, ctx: { userId: r.userId } };
  hooks.forEach((hook, index) => {
    void Promise.resolve()
      .then(() => hook(payload))
      .catch((error: unknown) => {
        deps.log.warn({ err: error, responseId: r.id, hook: index }, "an agent_end hook failed; the result stands");
        void recordEvents(deps, r.id, [{ type: "agent_end.hook_failed", data: { hook: index, message: error instanceof Error ? error.message : String(error) }, frame: false }]).catch(() => {});
      });
  });
}
