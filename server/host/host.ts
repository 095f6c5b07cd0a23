import type { TAuthorityServices } from "./authority-port";
import { claimLease, orphanedResponses, releaseLease, renewLeases, } from "../../db/repositories/responses";
import { stepsOf } from "../../db/repositories/steps";
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
  type TToolResultMiddlewareRegistry,
} from "../core/runtime";
import { endOnce, SPAN, startSpan } from "../observe/spans";
import { Attempt, AttemptSuspended, AttemptTerminated } from "./attempt";
import { HarnessFailure } from "./attempt-errors";
import { settleAttempt, startAttemptClock } from "./attempt-lifecycle";
import type { THarnesses } from "./harness-port";
import { expireDue } from "./pending/kinds";
import type { TClaimedRun, TRunStarter } from "./pending/contract";
import { runToolCall } from "./tool-calls";
import type { TDeps } from "./deps";
import { SteeringDesk } from "./steering";
import { mediaSweepIntervalMs, sweepMedia } from "./media/retention";
import { sessionWorkspace, prepareWorkspace } from "./workspace";

type TRunning = {
  cancellation: TAttemptCancellation;
  rerun: boolean;
  usage: TRunUsageAccumulator;
  claimed: TClaimedRun | null;
  /** When its lease was last set (claim, or any commit of its attempt): renewed only when half of it is gone. */
  renewedAt: number;
};

/**
 * The harness host of one process: admits attempts, drives harnesses, suspends and resumes
 * them, and holds their leases so another replica can adopt them if this one dies.
 */
export class Host implements TRunStarter {
  readonly id = newId("host");
  /** Guarded steering into running responses. */
  readonly steering: SteeringDesk;
  /** Tool-result middleware, applied before results go back to the model. */
  readonly middleware: TToolResultMiddlewareRegistry;
  /** Lifecycle observers; a failing observer never breaks an attempt. */
  readonly observers: TAttemptObserver<TAttemptLifecycleEvent & { responseId: string }>[] = [];
  private running = new Map<string, TRunning>();
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | null = null;
  private stopped = false;
  /** Draining (SIGTERM): attempts already running here go on; nothing new starts here. */
  private draining = false;

  /** The harnesses agents run on: the built-in ones and those enabled plugins registered (server/harnesses/registry.ts). */
  readonly harnesses: THarnesses;
  /** What the authority capabilities use of the services layer; set by the composition root. */
  authorityServices?: TAuthorityServices;

  /** False when the agent's harness declares `supportsCrossProfileSteering: false`. */
  crossProfileSteering(agent: string): boolean {
    const config = this.deps.agents.find(agent);
    return !config || this.harnesses.find(config.harness)?.supportsCrossProfileSteering !== false;
  }

  /** Does the agent's harness answer side questions (a plugin's `sideQuestion` handler)? */
  answersSideQuestions(agent: string): boolean {
    const config = this.deps.agents.find(agent);
    return config !== undefined && typeof this.harnesses.find(config.harness)?.sideQuestion === "function";
  }

  /** `parts`: registries the composition root filled before the host exists (plugins register into them at boot). */
  constructor(
    private readonly deps: TDeps,
    parts: { harnesses: THarnesses; middleware?: TToolResultMiddlewareRegistry },
  ) {
    this.harnesses = parts.harnesses;
    this.middleware = parts.middleware ?? createToolResultMiddlewareRegistry();
    this.steering = new SteeringDesk(deps);
  }

  /** Starts listening for wake-ups, the expiry sweep, media retention (when set), lease renewal, and adopts orphaned attempts. */
  async start(): Promise<void> {
    this.unsubscribe = this.deps.bus.subscribeWake((responseId, reason) => {
      if (reason === "cancel") this.running.get(responseId)?.cancellation.cancel({ kind: "user", message: "The response was cancelled." });
      else this.kick(responseId);
    });
    const every = (ms: number, fn: () => Promise<void>, keepWhileDraining = false) => {
      let busy = false;
      const timer = setInterval(() => {
        if (busy || this.stopped || (this.draining && !keepWhileDraining)) return;
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
    every(this.deps.config.expirySweepMs, () => expireDue(this.deps, this));
    const retentionMs = this.deps.config.media.retentionMs;
    if (retentionMs !== null) every(mediaSweepIntervalMs(retentionMs, this.deps.config.expirySweepMs), async () => {
      await sweepMedia(this.deps);
    });
    // A draining host still renews the leases of the attempts it lets finish; expiry and adoption are the other replicas' work then.
    every(Math.max(250, Math.floor(this.deps.config.leaseMs / 4)), () => this.renewLeases(), true);
    every(this.deps.config.leaseMs, () => this.adoptOrphans());
    await this.adoptOrphans();
  }

  /**
   * Renews the leases of attempts that committed nothing for half a lease (each commit of an
   * attempt renews its lease already), so a run that commits often costs no renewal of its own.
   */
  private async renewLeases(): Promise<void> {
    const now = Date.now();
    const due = [...this.running].filter(([, e]) => now - e.renewedAt >= this.deps.config.leaseMs / 2);
    if (due.length === 0) return;
    await renewLeases(this.deps.db, this.id, due.map(([id]) => id), this.deps.config.leaseMs);
    for (const [, e] of due) e.renewedAt = now;
  }

  /** Stops background work and cancels running attempts (their leases lapse for adoption). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    for (const t of this.timers) clearInterval(t);
    for (const entry of this.running.values()) entry.cancellation.cancel({ kind: "shutdown", message: "The server is stopping." });
  }

  /**
   * Graceful shutdown: admits no new attempt (a resume claimed here is released for another
   * replica to adopt), lets the running ones finish within `windowMs` (their tool calls, their
   * commits, their lease releases), then stops; only what outlives the window is cancelled and
   * marked interrupted in its trajectory. Says what finished and what was interrupted.
   */
  async drain(windowMs: number): Promise<{ finished: number; interrupted: string[] }> {
    this.draining = true;
    const before = this.running.size;
    const deadline = Date.now() + windowMs;
    while (this.running.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const interrupted = [...this.running.keys()];
    await this.stop();
    // The cancelled attempts record their interruption and release their leases (bounded: the database may be gone).
    const released = Date.now() + 5000;
    while (this.running.size > 0 && Date.now() < released) await new Promise((r) => setTimeout(r, 50));
    return { finished: before - interrupted.length, interrupted };
  }

  /** Whether an attempt of this response runs in this process now (its boundary will be announced here). */
  isLocal(responseId: string): boolean {
    return this.running.has(responseId);
  }

  /** Number of attempts executing in this process right now. */
  get activeCount(): number {
    return this.running.size;
  }

  private async adoptOrphans(): Promise<void> {
    for (const id of await orphanedResponses(this.deps.db)) this.kick(id);
  }

  /**
   * Starts a run that a transaction of this process already claimed for this host (created, or
   * resumed by a decision, answer or expiry): no lease round trip, no step-log read.
   */
  startClaimed(run: TClaimedRun): void {
    this.kick(run.row.id, run);
  }

  /** Makes sure the response's attempt runs (again) here if it is executing and no one else holds it. */
  kick(responseId: string, claimed: TClaimedRun | null = null): void {
    if (this.stopped) return;
    const current = this.running.get(responseId);
    if (current) {
      current.rerun = true;
      current.claimed = claimed ?? current.claimed;
      if (claimed) current.renewedAt = Date.now();
      return;
    }
    if (this.draining) {
      // A resume claimed here just before the drain began: another replica adopts it at once.
      if (claimed) void releaseLease(this.deps.db, responseId, this.id).catch(() => {});
      return;
    }
    // Retries of the same run share one usage total; run cleanup releases it.
    const entry: TRunning = { cancellation: createAttemptCancellation(), rerun: true, usage: createRunUsageAccumulator({ publish: () => {} }), claimed, renewedAt: Date.now() };
    this.running.set(responseId, entry);
    // The run counts as running here at once, and goes on at the next turn of the event loop: the
    // frames published with its claim (a decision's, to every stream following the run) go out first.
    setImmediate(() => {
      void this.drive(responseId, entry).finally(() => {
        entry.usage.close();
        this.running.delete(responseId);
      });
    });
  }

  private async drive(responseId: string, entry: TRunning): Promise<void> {
    while (entry.rerun && !this.stopped) {
      entry.rerun = false;
      if (!entry.cancellation.isAdmissionOpen()) entry.cancellation = createAttemptCancellation();
      const claimed = entry.claimed ?? (await this.claim(responseId));
      entry.claimed = null;
      entry.renewedAt = Date.now();
      if (!claimed) return;
      const ended = await this.runAttempt(claimed, entry).catch((error: unknown) => {
        this.deps.log.error({ err: error, responseId }, "attempt crashed");
        return "released" as const;
      });
      // Suspended and settled runs gave their lease up in their last commit.
      if (ended === "released") await releaseLease(this.deps.db, responseId, this.id).catch(() => {});
    }
  }

  /** Claims an executing run no live owner holds (adoption, a wake from a replica) and reads its step log. */
  private async claim(responseId: string): Promise<TClaimedRun | null> {
    try {
      const row = await claimLease(this.deps.db, responseId, this.id, this.deps.config.leaseMs);
      if (!row) return null;
      const steps = await stepsOf(this.deps.db, { id: responseId });
      return { row, claim: newId("claim"), steps, steeringQueued: true };
    } catch (error) {
      this.deps.log.error({ err: error, responseId }, "could not claim lease");
      return null;
    }
  }

  /** Runs one attempt; says whether its last commit gave the lease up (suspended, settled) or it must be released. */
  private async runAttempt(claimed: TClaimedRun, entry: TRunning): Promise<"suspended" | "settled" | "released"> {
    const row = claimed.row;
    const workspaceDir = prepareWorkspace(claimed.workspaceDir ?? (await sessionWorkspace(this.deps, row.sessionId)), this.deps.sandbox);
    const agent = this.deps.agents.forRun(row.agent, row.agentPolicy);
    let clock: ReturnType<typeof startAttemptClock> | null = null;
    // One span per attempt: it ends at the suspension, settlement or release of this attempt; a resumed
    // attempt is a new span with the same response id (and a link to the decision that resumed it here).
    const resumed = claimed.steps.length > 0;
    const run = startSpan(
      this.deps.observe.tracer,
      SPAN.run,
      undefined,
      { "countersign.response_id": row.id, "countersign.session_id": row.sessionId, "countersign.agent": row.agent, "countersign.run.resumed": resumed },
      claimed.resumedBy ? { links: [{ context: claimed.resumedBy, attributes: { "countersign.link": "resumed_by" } }] } : {},
    );
    const runtime = {
      trace: run.context,
      cancellation: entry.cancellation,
      steering: this.steering,
      middleware: this.middleware,
      usage: entry.usage,
      runTool: runToolCall,
      onCommitted: () => {
        entry.renewedAt = Date.now();
      },
      host: this as TRunStarter,
      services: () => this.authorityServices,
      onSuspending: () => clock?.lifecycle.transition("suspended"),
      onSettling: () => {
        if (clock?.lifecycle.canTransition("settled")) clock.lifecycle.transition("settled");
      },
    };
    const attempt = new Attempt(this.deps, row, agent ?? ({ name: row.agent, tools: [], approval: {} } as never), workspaceDir, runtime, claimed);
    clock = startAttemptClock(this.deps, attempt, this.observers);
    try {
      if (!agent) throw new DomainError("conflict", `The agent ${row.agent} is no longer configured.`);
      clock.lifecycle.transition("preparing");
      clock.lifecycle.transition("running");
      if (claimed.resumedAt !== undefined) this.deps.observe.metrics.resumed(Date.now() - claimed.resumedAt);
      await this.harnesses.run(attempt);
      // A deadline that fired while the last model call was in flight still fails the response.
      attempt.assertNotCancelled();
      clock.beginSettlement();
      await attempt.complete();
      endOnce(run.span, "completed");
    } catch (error) {
      if (error instanceof AttemptSuspended) {
        endOnce(run.span, "suspended");
        await clock.close();
        attempt.close();
        return "suspended";
      }
      // Settled by someone else (a cancel, a denial, an expiry): this attempt only ends.
      if (error instanceof AttemptTerminated || (error instanceof AttemptCancelledError && error.reason.kind === "user")) {
        if (clock.lifecycle.canTransition("settled")) clock.lifecycle.transition("settled");
        await clock.close();
        await attempt.recordAfterEnd().catch((e: unknown) => this.deps.log.warn({ err: e, responseId: row.id }, "could not record the ended attempt's events"));
        attempt.close();
        entry.cancellation.freeze();
        endOnce(run.span, "ended");
        return "released";
      }
      if (this.stopped && entry.cancellation.reason()?.kind === "shutdown") {
        // It outlived the drain window: the trajectory says so; another replica adopts the run.
        await attempt.recordInterrupted(this.id).catch((e: unknown) => this.deps.log.warn({ err: e, responseId: row.id }, "could not record the interruption"));
        endOnce(run.span, "shutdown");
        await clock.close();
        attempt.close();
        return "released";
      }
      clock.beginSettlement();
      const failure = this.describeFailure(error, entry.cancellation);
      this.deps.log.warn({ responseId: row.id, ...failure }, "attempt failed");
      await attempt.fail(failure).catch((e: unknown) => {
        this.deps.log.error({ err: e }, "could not record failure");
      });
      endOnce(run.span, "failed", failure.message);
    } finally {
      // Whatever else happened (a crash of the attempt itself), the span ends here.
      endOnce(run.span, "crashed");
    }
    await settleAttempt(this.deps, attempt, clock, agent?.onAgentEnd ?? []);
    return "settled";
  }

  private describeFailure(error: unknown, cancellation: TAttemptCancellation): { code: string; message: string } {
    const reason = cancellation.reason();
    if (reason?.kind === "timeout") return { code: "deadline_exceeded", message: reason.message };
    if (error instanceof DomainError) return { code: error.code, message: error.message };
    if (error instanceof HarnessFailure) return { code: error.code, message: error.message };
    return { code: "harness_error", message: error instanceof Error ? error.message : String(error) };
  }
}
