import { claimLease, orphanedResponses, releaseLease, renewLeases, type TResponseRow } from "../../db/repositories/responses";
import { findAgent } from "../agents/config";
import { DomainError } from "../core/errors";
import { newId } from "../core/ids";
import {
  AttemptCancelledError,
  createAttemptCancellation,
  createRunUsageAccumulator,
  createToolResultMiddlewareRegistry,
  type TAttemptCancellation,
  type TAttemptLifecycleEvent,
  type TAttemptObserver,
  type TRunUsageAccumulator,
} from "../core/runtime";
import { HarnessFailure } from "../harnesses/errors";
import { runHarness } from "../harnesses/registry";
import { expirePending } from "../services/expire-pending";
import { Attempt, AttemptSuspended, AttemptTerminated } from "./attempt";
import { settleAttempt, startAttemptClock } from "./attempt-lifecycle";
import type { TDeps } from "./deps";
import { SteeringDesk } from "./steering";
import { sessionWorkspace, prepareWorkspace } from "./workspace";

type TRunning = { cancellation: TAttemptCancellation; rerun: boolean; usage: TRunUsageAccumulator };

/**
 * The harness host of one process: admits attempts, drives harnesses, suspends and resumes
 * them, and holds their leases so another replica can adopt them if this one dies.
 */
export class Host {
  readonly id = newId("host");
  /** Guarded steering into running responses. */
  readonly steering: SteeringDesk;
  /** Tool-result middleware, applied before results go back to the model. */
  readonly middleware = createToolResultMiddlewareRegistry();
  /** Lifecycle observers; a failing observer never breaks an attempt. */
  readonly observers: TAttemptObserver<TAttemptLifecycleEvent & { responseId: string }>[] = [];
  private running = new Map<string, TRunning>();
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | null = null;
  private stopped = false;

  constructor(private readonly deps: TDeps) {
    this.steering = new SteeringDesk(deps);
  }

  /** Starts listening for wake-ups, the expiry sweep, lease renewal, and adopts orphaned attempts. */
  async start(): Promise<void> {
    this.unsubscribe = this.deps.bus.subscribeWake((responseId, reason) => {
      if (reason === "cancel") this.running.get(responseId)?.cancellation.cancel({ kind: "user", message: "The response was cancelled." });
      else this.kick(responseId);
    });
    const every = (ms: number, fn: () => Promise<void>) => {
      let busy = false;
      const timer = setInterval(() => {
        if (busy || this.stopped) return;
        busy = true;
        fn()
          .catch((error: unknown) => this.deps.log.error({ err: error }, "host background task failed"))
          .finally(() => {
            busy = false;
          });
      }, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(this.deps.config.expirySweepMs, () => expirePending(this.deps));
    every(Math.max(250, Math.floor(this.deps.config.leaseMs / 3)), () => renewLeases(this.deps.db, this.id, [...this.running.keys()], this.deps.config.leaseMs));
    every(this.deps.config.leaseMs, () => this.adoptOrphans());
    await this.adoptOrphans();
  }

  /** Stops background work and cancels running attempts (their leases lapse for adoption). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    for (const t of this.timers) clearInterval(t);
    for (const entry of this.running.values()) entry.cancellation.cancel({ kind: "shutdown", message: "The server is stopping." });
  }

  /** Number of attempts executing in this process right now. */
  get activeCount(): number {
    return this.running.size;
  }

  private async adoptOrphans(): Promise<void> {
    for (const id of await orphanedResponses(this.deps.db)) this.kick(id);
  }

  /** Makes sure the response's attempt runs (again) here if it is executing and no one else holds it. */
  kick(responseId: string): void {
    if (this.stopped) return;
    const current = this.running.get(responseId);
    if (current) {
      current.rerun = true;
      return;
    }
    // Retries of the same run share one usage total; run cleanup releases it.
    const entry: TRunning = { cancellation: createAttemptCancellation(), rerun: true, usage: createRunUsageAccumulator({ publish: () => {} }) };
    this.running.set(responseId, entry);
    void this.drive(responseId, entry).finally(() => {
      entry.usage.close();
      this.running.delete(responseId);
    });
  }

  private async drive(responseId: string, entry: TRunning): Promise<void> {
    while (entry.rerun && !this.stopped) {
      entry.rerun = false;
      if (!entry.cancellation.isAdmissionOpen()) entry.cancellation = createAttemptCancellation();
      const row = await claimLease(this.deps.db, responseId, this.id, this.deps.config.leaseMs).catch((error: unknown) => {
        this.deps.log.error({ err: error, responseId }, "could not claim lease");
        return null;
      });
      if (!row) return;
      const settled = await this.runAttempt(row, entry).catch((error: unknown) => {
        this.deps.log.error({ err: error, responseId }, "attempt crashed");
        return false;
      });
      if (!settled) await releaseLease(this.deps.db, responseId, this.id).catch(() => {});
    }
  }

  /** Runs one attempt; returns true when the response settled (its lease was released by agent-end). */
  private async runAttempt(row: TResponseRow, entry: TRunning): Promise<boolean> {
    const workspaceDir = prepareWorkspace(await sessionWorkspace(this.deps, row.sessionId), this.deps.sandbox);
    const agent = findAgent(row.agent);
    const runtime = { cancellation: entry.cancellation, steering: this.steering, middleware: this.middleware, usage: entry.usage };
    const attempt = new Attempt(this.deps, row, agent ?? ({ name: row.agent, tools: [], approval: {} } as never), workspaceDir, runtime);
    const clock = startAttemptClock(this.deps, attempt, this.observers);
    try {
      if (!agent) throw new DomainError("conflict", `The agent ${row.agent} is no longer configured.`);
      clock.lifecycle.transition("preparing");
      await attempt.load();
      clock.lifecycle.transition("running");
      await runHarness(attempt);
      // A deadline that fired while the last model call was in flight still fails the response.
      attempt.assertNotCancelled();
      clock.beginSettlement();
      await attempt.complete();
    } catch (error) {
      if (error instanceof AttemptSuspended) {
        clock.lifecycle.transition("suspended");
        await clock.close();
        return false;
      }
      // Settled by someone else (a cancel, a denial, an expiry): this attempt only ends.
      if (error instanceof AttemptTerminated || (error instanceof AttemptCancelledError && error.reason.kind === "user")) {
        if (clock.lifecycle.canTransition("settled")) clock.lifecycle.transition("settled");
        await clock.close();
        attempt.capabilities.close();
        entry.cancellation.freeze();
        return false;
      }
      if (this.stopped && entry.cancellation.reason()?.kind === "shutdown") {
        await clock.close();
        return false;
      }
      clock.beginSettlement();
      const failure = this.describeFailure(error, entry.cancellation);
      this.deps.log.warn({ responseId: row.id, ...failure }, "attempt failed");
      await attempt.fail(failure).catch((e: unknown) => {
        if (!(e instanceof AttemptTerminated)) this.deps.log.error({ err: e }, "could not record failure");
      });
    }
    await settleAttempt(this.deps, attempt, clock, agent?.onAgentEnd ?? [], () => releaseLease(this.deps.db, row.id, this.id));
    return true;
  }

  private describeFailure(error: unknown, cancellation: TAttemptCancellation): { code: string; message: string } {
    const reason = cancellation.reason();
    if (reason?.kind === "timeout") return { code: "deadline_exceeded", message: reason.message };
    if (error instanceof DomainError) return { code: error.code, message: error.message };
    if (error instanceof HarnessFailure) return { code: error.code, message: error.message };
    return { code: "harness_error", message: error instanceof Error ? error.message : String(error) };
  }
}
