import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { claimLease, orphanedResponses, releaseLease, renewLeases, type TResponseRow } from "../../db/repositories/responses";
import { agentSessions } from "../../db/schema";
import { findAgent } from "../agents/config";
import { DomainError } from "../core/errors";
import { newId } from "../core/ids";
import { runModelLoop } from "../harnesses/model-loop";
import { scriptedDriver } from "../harnesses/scripted";
import { expirePending } from "../services/expire-pending";
import { Attempt, AttemptSuspended, AttemptTerminated } from "./attempt";
import type { TDeps } from "./deps";

type TRunning = { abort: AbortController; rerun: boolean };

/**
 * The harness host of one process: admits attempts, drives harnesses, suspends and resumes
 * them, and holds their leases so another replica can adopt them if this one dies.
 */
export class Host {
  readonly id = newId("host");
  private running = new Map<string, TRunning>();
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | null = null;
  private stopped = false;

  constructor(private readonly deps: TDeps) {}

  /** Starts listening for wake-ups, the expiry sweep, lease renewal, and adopts orphaned attempts. */
  async start(): Promise<void> {
    this.unsubscribe = this.deps.bus.subscribeWake((responseId, reason) => {
      if (reason === "cancel") this.running.get(responseId)?.abort.abort(new Error("cancelled"));
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
    every(Math.max(250, Math.floor(this.deps.config.leaseMs / 3)), () =>
      renewLeases(this.deps.db, this.id, [...this.running.keys()], this.deps.config.leaseMs),
    );
    every(this.deps.config.leaseMs, () => this.adoptOrphans());
    await this.adoptOrphans();
  }

  /** Stops background work and aborts running attempts (their leases lapse for adoption). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    for (const t of this.timers) clearInterval(t);
    for (const entry of this.running.values()) entry.abort.abort(new Error("server stopping"));
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
    const entry: TRunning = { abort: new AbortController(), rerun: true };
    this.running.set(responseId, entry);
    void this.drive(responseId, entry).finally(() => this.running.delete(responseId));
  }

  private async drive(responseId: string, entry: TRunning): Promise<void> {
    while (entry.rerun && !entry.abort.signal.aborted && !this.stopped) {
      entry.rerun = false;
      const row = await claimLease(this.deps.db, responseId, this.id, this.deps.config.leaseMs).catch((error: unknown) => {
        this.deps.log.error({ err: error, responseId }, "could not claim lease");
        return null;
      });
      if (!row) return;
      try {
        await this.runAttempt(row, entry.abort.signal);
      } finally {
        await releaseLease(this.deps.db, responseId, this.id).catch(() => {});
      }
    }
  }

  private async runAttempt(row: TResponseRow, signal: AbortSignal): Promise<void> {
    const agent = findAgent(row.agent);
    const [session] = await this.deps.db.select().from(agentSessions).where(eq(agentSessions.id, row.sessionId));
    const workspaceDir = session?.workspaceDir ?? join(this.deps.config.dataDir, "workspaces", row.sessionId);
    mkdirSync(workspaceDir, { recursive: true });
    if (!agent) {
      const attempt = new Attempt(this.deps, row, { name: row.agent } as never, workspaceDir, signal);
      await attempt.fail({ code: "unknown_agent", message: `The agent ${row.agent} is no longer configured.` });
      return;
    }
    const attempt = new Attempt(this.deps, row, agent, workspaceDir, signal);
    try {
      await attempt.load();
      await runModelLoop(attempt, scriptedDriver(row.input));
      await attempt.complete();
    } catch (error) {
      if (error instanceof AttemptSuspended || error instanceof AttemptTerminated) return;
      if (signal.aborted && this.stopped) return;
      const message = error instanceof Error ? error.message : String(error);
      const code = error instanceof DomainError ? error.code : "harness_error";
      this.deps.log.warn({ responseId: row.id, code, message }, "attempt failed");
      await attempt.fail({ code, message }).catch((e: unknown) => {
        if (!(e instanceof AttemptTerminated)) this.deps.log.error({ err: e }, "could not record failure");
      });
    }
  }
}
