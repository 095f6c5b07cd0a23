import {
  type TAgentEndHook,
  type TAttemptLifecycle,
  type TAttemptLifecycleEvent,
  type TAttemptObserver,
  createAttemptDeadlineController,
  createAttemptLifecycle,
  emitAttemptEvent,
  runAgentEndSideEffects,
} from "../core/runtime";
import { recordEvents } from "./transact";
import { getResponse } from "../../db/repositories/responses";
import type { Attempt } from "./attempt";
import type { TDeps } from "./deps";

export type TAgentEndPayload = { event: { responseId: string; sessionId: string; agent: string }; ctx: { userId: string } };

export type TAttemptClock = {
  lifecycle: TAttemptLifecycle;
  /** Starts the absolute settlement deadline (only the first call counts). */
  beginSettlement: () => void;
  /** Closes the deadlines and records the remaining lifecycle events (observers are delivered, never awaited). */
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
 * Gates the attempt's lifecycle events (deduplicated per phase, recorded in the trajectory,
 * delivered to observers whose failures are isolated) and arms its deadlines: the execution
 * timeout cancels the attempt with reason `timeout`; the settlement deadline bounds finalization.
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
  const deadline = createAttemptDeadlineController({
    startedAtMs: Date.now(),
    timeoutMs: executionTimeoutOf(attempt),
    settlementTimeoutMs: attempt.agent.settlementTimeoutMs ?? DEFAULT_SETTLEMENT_TIMEOUT_MS,
    signal: attempt.signal,
    onTimeout: (kind) =>
      attempt.runtime.cancellation.cancel({
        kind: "timeout",
        message: kind === "execution" ? `The response ran past its execution timeout of ${executionTimeoutOf(attempt)} ms.` : "Finalizing the response took longer than its settlement deadline.",
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
      await attempt.capabilities.trajectory.flush().catch(() => {});
    },
  };
}

/**
 * After a response is finalized: prepares the transcript anchor before the turn lease is
 * released, then starts the agent's agent_end hooks without waiting; hook failures are recorded
 * and never change the result. The attempt's capabilities close here (later calls fail closed).
 */
export async function settleAttempt(
  deps: TDeps,
  attempt: Attempt,
  clock: TAttemptClock,
  hooks: readonly TAgentEndHook<TAgentEndPayload>[],
  releaseTurnLease: () => Promise<void>,
): Promise<void> {
  if (clock.lifecycle.canTransition("settled")) clock.lifecycle.transition("settled");
  await clock.close();
  attempt.capabilities.close();
  attempt.runtime.cancellation.freeze();
  const r = attempt.response;
  await runAgentEndSideEffects<TAgentEndPayload>({
    prepareTranscriptAnchors: async () => {
      const row = await getResponse(deps.db, r.id);
      await recordEvents(deps, r.id, [{ type: "transcript.anchor", data: { status: row?.status ?? null, lastSeq: (row?.nextSeq ?? 1) - 1, outputItems: row?.output.length ?? 0 }, frame: false }]);
    },
    releaseTurnLease,
    hooks,
    payload: { event: { responseId: r.id, sessionId: r.sessionId, agent: r.agent }, ctx: { userId: r.userId } },
    onHookError: (error, { index }) => {
      deps.log.warn({ err: error, responseId: r.id, hook: index }, "an agent_end hook failed; the result stands");
      void recordEvents(deps, r.id, [{ type: "agent_end.hook_failed", data: { hook: index, message: error instanceof Error ? error.message : String(error) }, frame: false }]).catch(() => {});
    },
    onAnchorError: (error) => deps.log.warn({ err: error, responseId: r.id }, "could not prepare the transcript anchor"),
  });
}
