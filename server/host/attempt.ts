import type { Context } from "@opentelemetry/api";
import type { Db } from "../../db/client";
import { envelopeOf, finishResponse, leaseFor, lockExecuting, storeOutput, suspendResponse, type TLockedRow, type TResponseRow } from "../../db/repositories/responses";
import { insertGatePasses, type TGatePass } from "../../db/repositories/gate-passes";
import { type TStepRow, upsertSteps } from "../../db/repositories/steps";
import type { TAgentConfig } from "../agents/types";
import type { TOutputItem, TRequiredAction } from "../core/envelope";
import type { TNewEvent } from "../core/frames";
import type { TPendingRef } from "../core/pending";
import type { TAttemptCancellation, TReportOutputTokens, TRunUsageAccumulator, TToolResultMiddlewareRegistry } from "../core/runtime";
import { snapshotNodeCommands } from "../devices/node-invoke-tool";
import { AttemptTerminated } from "./attempt-errors";
import { createHostCapabilities, harnessCapabilities } from "./capabilities";
import type { THostCapabilities } from "../../plugin-sdk/capabilities";
import { createAuthorityCapabilities, createPendingInputMethods } from "./authority";
import type { TAuthorityServices } from "./authority-port";
import type { TDeps } from "./deps";
import type { TClaimedRun, TRunStarter, TSettlement } from "./pending/contract";
import { resolvedKey } from "./pending/contract";
import { cancelQueuedSteering, type SteeringDesk, type TTakenSteering } from "./steering";
import { recordEvents, type TAnnounce, type TEmit, transact } from "./transact";

export { AttemptSuspended, AttemptTerminated } from "./attempt-errors";

/** What a step may record: frames and output items, committed with the step's result. */
export type TStepRecorder = {
  frame: (type: string, data: Record<string, unknown>) => void;
  /**
   * Commits a frame now (with everything buffered before it), e.g. text deltas while the model
   * streams. Not part of the step's result: a replay does not repeat it.
   */
  liveFrame: (type: string, data: Record<string, unknown>) => Promise<void>;
  event: (type: string, data: Record<string, unknown>) => void;
  item: (item: TOutputItem) => void;
  usage: (usage: { inputTokens?: number; outputTokens?: number }) => void;
  /** Commits claimed steering with this step: `used` when the model produced the turn that saw it. */
  steering: (claim: TSteeringClaim, used: boolean) => void;
};

/** Steering messages taken for one model turn. */
export type TSteeringClaim = { turn: number; texts: string[]; dispatched: TTakenSteering[]; revoked: TTakenSteering[] };

export type TToolCall = { id: string; name: string; arguments: unknown };

type TStepWrite = { key: string; status: "running" | "completed"; result: unknown };

/**
 * How a commit that ends the run writes its end with the last flush: given the row with the
 * flushed output and usage, and the sequences its first event will get, the terminal row's write
 * (which stores the output and usage too) and the events that close the trajectory.
 */
type TEnding = (row: TLockedRow, next: { seq: number; frameSeq: number }) => { stored: PromiseLike<unknown>; events: TNewEvent[] };

/** The transaction a commit runs in, with the run's row as this commit left it. */
export type TCommit = {
  tx: Db;
  emit: TEmit;
  announce: TAnnounce;
  row: TLockedRow;
  /** The sequence and frame sequence the run's next appended event gets. */
  next: () => { seq: number; frameSeq: number };
  flush: () => Promise<void>;
};

/** The runtime id tool-result middleware targets for harnesses hosted by Countersign. */
export const HOST_RUNTIME_ID = "countersign";

/** What the host gives each attempt besides the database: cancellation, steering, middleware, usage, lifecycle hooks. */
export type TAttemptRuntime = {
  cancellation: TAttemptCancellation;
  steering: SteeringDesk;
  middleware: TToolResultMiddlewareRegistry;
  usage: TRunUsageAccumulator;
  /** Starts runs this process claims (a question expired while a tool call of this attempt held it resumes nothing, but the expiry path is shared). */
  host: TRunStarter;
  /** Runs one tool call of this attempt (server/host/tool-calls.ts). */
  runTool: (attempt: Attempt, call: TToolCall, context?: string) => Promise<unknown>;
  /** Called after each commit of the attempt (it renewed the lease). */
  onCommitted?: () => void;
  /** Called inside the commit that suspends the run (its lifecycle event commits with it). */
  onSuspending?: () => void;
  /** Called inside the commit that settles the run. */
  onSettling?: () => void;
  /** The trace context of this attempt's run span: turns and tool calls are its children. */
  trace?: Context;
  /** The services the authority capabilities use (child runs, question answers), when the server provides them. */
  services?: () => TAuthorityServices | undefined;
};

/**
 * One run of a harness over a response. Steps are buffered and committed together at the points
 * that need durability: before a tool with side effects runs (its "running" marker), when the run
 * suspends on a pending action, and with the final envelope; each commit also renews the lease.
 * Completed steps are replayed from the step log, so a resumed attempt never re-runs a tool.
 */
export class Attempt {
  private steps = new Map<string, TStepRow>();
  private writes: TStepWrite[] = [];
  private events: TNewEvent[] = [];
  private items: TOutputItem[] = [];
  private gatePasses: TGatePass[] = [];
  private usageDelta = { inputTokens: 0, outputTokens: 0 };
  /** The run's output tokens so far (its stored total plus what this attempt added). */
  private totalOutputTokens: number;
  /** The run's live counter for this attempt: true when a report counts (a positive count, this attempt still current). */
  private readonly countOutputTokens: TReportOutputTokens;
  private reportedLive = 0;
  private steeringWrites: Array<(tx: Db, emit: TEmit, responseId: string) => Promise<void>> = [];
  private chain: Promise<unknown> = Promise.resolve();
  private readonly startedAt = Date.now();
  private steeringQueued: boolean;
  private readonly unwatchSteering: () => void;
  /** The claim this attempt runs under: a tool call the settling transaction marked with it runs here. */
  readonly claim: string;
  /** The versioned host capabilities handed to the harness; closed when the attempt settles. */
  readonly capabilities: ReturnType<typeof createHostCapabilities>;
  /** What the harness receives: the capabilities without the host's own controls (close, the media ledger). */
  readonly harnessCapabilities: THostCapabilities;
  readonly signal: AbortSignal;
  /** The harness's declared node commands, copied now: mutating the agent config later cannot widen them. */
  readonly requiredNodeCommands: readonly string[] | null;

  constructor(
    readonly deps: TDeps,
    readonly response: TResponseRow,
    readonly agent: TAgentConfig,
    readonly workspaceDir: string,
    readonly runtime: TAttemptRuntime,
    start: Pick<TClaimedRun, "claim" | "steps" | "steeringQueued">,
  ) {
    this.claim = start.claim;
    this.totalOutputTokens = response.usage.outputTokens;
    for (const row of start.steps) this.steps.set(row.key, row);
    this.steeringQueued = start.steeringQueued;
    // Steering queued while this attempt runs is announced on the bus (a frame here, a hint from a replica).
    this.unwatchSteering = deps.bus.subscribeFrames(response.id, (frame) => {
      if ("hint" in frame || frame.type === "steer.queued") this.steeringQueued = true;
    });
    this.signal = runtime.cancellation.signal;
    this.countOutputTokens = runtime.usage.capability();
    this.requiredNodeCommands = snapshotNodeCommands(agent);
    this.capabilities = createHostCapabilities({
      deps,
      responseId: response.id,
      sessionId: response.sessionId,
      userId: response.userId,
      reportOutputTokens: (n) => this.reportOutputTokens(n),
      steering: runtime.steering,
      isRunLive: () => runtime.cancellation.isAdmissionOpen(),
      record: (event) => this.events.push(event),
      commit: async () => {
        if (this.writes.length > 0 || this.events.length > 0 || this.items.length > 0) await this.commit();
      },
      workspaceDir,
      attachments: response.attachments,
      signal: runtime.cancellation.signal,
      publish: async (write) => (await this.commit(async (c) => write(c.tx))) as Awaited<ReturnType<typeof write>>,
      authority: (isOpen) => createAuthorityCapabilities(this, isOpen),
      pendingInput: (isOpen) => createPendingInputMethods(this, isOpen),
    });
    this.harnessCapabilities = harnessCapabilities(this.capabilities);
  }

  /** Time this run has executed, over all its attempts (waits for people excluded). */
  get activeMs(): number {
    return this.response.activeMs + (Date.now() - this.startedAt);
  }

  /**
   * Takes the steering messages for model turn `turn`, right before the model: revoked ones are
   * rejected, and the rest are re-checked synchronously as the last act before the caller
   * dispatches them. Pass the claim to `record.steering` so it commits with the turn that used it.
   * Costs nothing when nothing was queued (the bus announces every queued message).
   */
  async claimSteering(turn: number): Promise<TSteeringClaim> {
    if (!this.steeringQueued) return { turn, dispatched: [], revoked: [], texts: [] };
    this.steeringQueued = false;
    const desk = this.runtime.steering;
    const taken = (await this.commit(({ tx, emit }) => desk.take(tx, emit, this.response.id, turn, () => this.runtime.cancellation.isAdmissionOpen()))) ?? [];
    const { dispatched, revoked } = desk.recheck(taken);
    return { turn, dispatched, revoked, texts: dispatched.map((d) => d.text) };
  }

  /** Runs one tool call: suspends for approval or the client, executes at most once, records the result. */
  runTool(call: TToolCall, context?: string): Promise<unknown> {
    return this.runtime.runTool(this, call, context);
  }

  /** Throws the cancellation reason (timeout, user, shutdown) once the attempt was cancelled. */
  assertNotCancelled(): void {
    this.signal.throwIfAborted();
  }

  get input(): unknown {
    return this.response.input;
  }

  /** The stored step `key`, if any (completed or running). */
  stepOf(key: string): TStepRow | undefined {
    return this.steps.get(key);
  }

  /** How the pending action of tool call `callId` settled, once a decision, answer or expiry resumed the run. */
  settlementOf(callId: string): TSettlement | null {
    const row = this.steps.get(resolvedKey(callId));
    return row?.status === "completed" ? (row.result as TSettlement) : null;
  }

  /** Runs `fn` once per key for the life of the response; later runs return the stored result. */
  async step<T>(key: string, fn: (record: TStepRecorder) => Promise<T>): Promise<T> {
    const done = this.steps.get(key);
    if (done?.status === "completed") return done.result as T;
    const events: TNewEvent[] = [];
    const items: TOutputItem[] = [];
    let outputTokens = 0;
    let inputTokens = 0;
    let steering: { claim: TSteeringClaim; used: boolean } | null = null;
    const result = await fn({
      frame: (type, data) => events.push({ type, data, frame: true }),
      liveFrame: async (type, data) => {
        this.events.push({ type, data, frame: true });
        await this.commit();
      },
      event: (type, data) => events.push({ type, data, frame: false }),
      item: (item) => items.push(item),
      usage: (u) => {
        inputTokens += Number.isSafeInteger(u.inputTokens) && (u.inputTokens ?? 0) > 0 ? (u.inputTokens as number) : 0;
        // Live output-token usage goes through the run's counter: invalid or late reports count for nothing.
        if (u.outputTokens !== undefined && this.countOutputTokens(u.outputTokens)) outputTokens += u.outputTokens;
      },
      steering: (claim, used) => {
        steering = { claim, used };
      },
    });
    this.buffer(key, "completed", result ?? null, events, items);
    this.usageDelta.inputTokens += inputTokens;
    if (outputTokens > 0) this.addOutputTokens(outputTokens);
    const claimed = steering as { claim: TSteeringClaim; used: boolean } | null;
    // A claim that took nothing has nothing to commit.
    if (claimed && (claimed.claim.dispatched.length > 0 || claimed.claim.revoked.length > 0)) {
      const { claim, used } = claimed;
      // A message commits with the turn that used it; a turn that never came uses nothing (it stays queued).
      this.steeringWrites.push((tx, emit, responseId) => this.runtime.steering.commitTaken(tx, emit, responseId, claim.turn, used ? claim.dispatched : [], claim.revoked));
    }
    return result;
  }

  /** Buffers a step's outcome (and its events and items) for the next commit. */
  buffer(key: string, status: "running" | "completed", result: unknown, events: readonly TNewEvent[] = [], items: readonly TOutputItem[] = []): void {
    this.writes.push({ key, status, result });
    this.events.push(...events);
    this.items.push(...items);
    const now = new Date();
    this.steps.set(key, { responseId: this.response.id, key, status, result, createdAt: now, completedAt: status === "completed" ? now : null });
  }

  /** Buffers a trajectory event of the attempt itself (not of a step), for the next commit. */
  bufferEvent(event: TNewEvent): void {
    this.events.push(event);
  }

  /** Buffers the record of a call the gate settled without a person, for the next commit. */
  bufferGatePass(pass: TGatePass): void {
    this.gatePasses.push(pass);
  }

  /**
   * Commits everything buffered in one transaction that first locks the still-executing run this
   * host holds (renewing its lease); `extra` runs inside it (a suspension, the final envelope). A
   * settled or adopted run ends the attempt (AttemptTerminated). Commits of one attempt never overlap.
   */
  commit<T>(extra?: (c: TCommit) => Promise<T>, options: { flushFirst?: boolean; besideLock?: (tx: Db) => void } = {}): Promise<T | undefined> {
    const run = this.chain.then(() =>
      transact(this.deps, async (tx, emit, announce) => {
        const locked = lockExecuting(tx, { id: this.response.id, lease: leaseFor(this.deps.config.leaseMs) });
        // Statements sent right behind the lock, in the same wait for the database: when the lock
        // finds the run settled or adopted, the transaction rolls them back with everything else.
        options.besideLock?.(tx);
        const [row] = await locked;
        if (!row) throw new AttemptTerminated();
        // The row stays locked until the commit, and every event of it is appended through this
        // emit, so the next sequences are known here without reading them back.
        const appended = { events: 0, frames: 0 };
        const counted: TEmit = async (responseId, events) => {
          const frames = await emit(responseId, events);
          if (responseId === row.id) {
            appended.events += events.length;
            appended.frames += events.filter((e) => e.frame).length;
          }
          return frames;
        };
        const next = () => ({ seq: row.nextSeq + appended.events, frameSeq: row.nextFrameSeq + appended.frames });
        const c: TCommit = { tx, emit: counted, announce, row, next, flush: async () => this.flushInto(c) };
        if (options.flushFirst !== false) await c.flush();
        const value = extra ? await extra(c) : undefined;
        await c.flush();
        return value;
      }),
    );
    this.chain = run.catch(() => {});
    return run.then((value) => {
      this.runtime.onCommitted?.();
      return value;
    });
  }

  /** Commits the steering messages the buffered turns used (or rejects them), before anything else of the step. */
  private async flushSteering(c: TCommit): Promise<void> {
    for (const write of this.steeringWrites.splice(0)) await write(c.tx, c.emit, c.row.id);
  }

  /**
   * `reportOutputTokens` as a harness calls it (once per completed model response, with that
   * response's tokens): counted, the envelope's total grows and a `response.usage` frame goes out
   * with the next commit. A count the run's counter refuses (not a positive integer, a superseded
   * or settled attempt) changes nothing and returns false.
   */
  private reportOutputTokens(outputTokens: number): boolean {
    if (!this.countOutputTokens(outputTokens)) return false;
    this.reportedLive += outputTokens;
    this.addOutputTokens(outputTokens);
    return true;
  }

  /**
   * Output tokens the harness reported itself through `reportOutputTokens` in this attempt. A loop
   * whose harness reported live does not count the same tokens again from the usage it returns.
   */
  get reportedOutputTokens(): number {
    return this.reportedLive;
  }

  /** Adds counted output tokens to the envelope's total, with their `response.usage` frame. */
  private addOutputTokens(outputTokens: number): void {
    this.usageDelta.outputTokens += outputTokens;
    this.totalOutputTokens += outputTokens;
    this.events.push({ type: "response.usage", data: { outputTokens, totalOutputTokens: this.totalOutputTokens }, frame: true });
  }

  /**
   * Writes what is buffered. With `ending`, the run's end goes with it: the terminal row's write
   * carries the output and usage, and the closing events follow the buffered ones in the same
   * append, so the last step and the end are one batch (one wait for the database).
   */
  private async flushInto(c: TCommit, ending?: TEnding): Promise<void> {
    const writes = this.writes.splice(0);
    const events = this.events.splice(0);
    const items = this.items.splice(0);
    const passes = this.gatePasses.splice(0);
    const usage = this.usageDelta;
    this.usageDelta = { inputTokens: 0, outputTokens: 0 };
    await this.flushSteering(c);
    // The output, the steps and the events are independent writes: sent as one batch on the
    // transaction's connection, so the commit waits for the database once, not three times.
    const batch: Array<PromiseLike<unknown>> = [];
    if (items.length > 0 || usage.inputTokens > 0 || usage.outputTokens > 0) {
      const total = { inputTokens: c.row.usage.inputTokens + usage.inputTokens, outputTokens: c.row.usage.outputTokens + usage.outputTokens };
      const output = [...c.row.output, ...items];
      if (!ending) batch.push(storeOutput(c.tx, { id: c.row.id, output, usage: total }));
      c.row = { ...c.row, output, usage: total };
    }
    if (writes.length > 0) {
      const now = new Date();
      // The last write of a key wins (a running marker, then its result).
      const byKey = new Map(writes.map((w) => [w.key, w]));
      batch.push(upsertSteps(c.tx, [...byKey.values()].map((w) => ({ responseId: c.row.id, key: w.key, status: w.status, result: w.result ?? null, completedAt: w.status === "completed" ? now : null }))));
    }
    if (passes.length > 0) batch.push(insertGatePasses(c.tx, passes));
    let closing: { events: TNewEvent[]; firstFrame: number } | null = null;
    if (ending) {
      const next = c.next();
      const first = { seq: next.seq + events.length, frameSeq: next.frameSeq + events.filter((e) => e.frame).length };
      const end = ending(c.row, first);
      batch.push(end.stored);
      events.push(...end.events);
      closing = { events: end.events, firstFrame: first.frameSeq };
    }
    const appended = events.length > 0 ? c.emit(c.row.id, events) : null;
    if (appended) batch.push(appended);
    await Promise.all(batch);
    if (closing && appended) {
      // The closing events were built with the sequences they would get; the append must agree.
      const frames = await appended;
      const endFrames = closing.events.filter((e) => e.frame).length;
      const got = frames[frames.length - endFrames]?.sequence;
      if (endFrames > 0 && got !== closing.firstFrame) throw new Error(`The closing events of ${c.row.id} were built for frame ${closing.firstFrame}, but the first got ${got}.`);
    }
  }

  /**
   * Inside a commit: suspends the run on a pending action opened in the same transaction. The
   * status, what it waits on, the active time, the request event and the boundary frame commit together.
   */
  async suspendIn(c: TCommit, requested: TNewEvent, action: TRequiredAction, pending: TPendingRef): Promise<void> {
    this.runtime.onSuspending?.();
    await c.flush();
    const activeMs = this.activeMs;
    await suspendResponse(c.tx, c.row.id, { pendingAction: pending, activeMs });
    c.row = { ...c.row, status: "requires_action", pendingAction: pending, activeMs };
    const envelope = envelopeOf(c.row, "requires_action", action);
    await c.emit(c.row.id, [requested, { type: "response.completed", data: { ...envelope, responseId: c.row.id }, frame: true }]);
    c.announce({ k: "inbox", change: { kind: pending.type, responseId: c.row.id, id: pending.id } });
  }

  /** Marks the response completed with its envelope and boundary frame, with the last steps. */
  async complete(): Promise<void> {
    await this.finish("completed");
  }

  /** Marks the response failed; the error message is a sentence, never a stack trace. */
  async fail(error: { code: string; message: string }): Promise<void> {
    await this.finish("failed", error).catch((e: unknown) => {
      if (!(e instanceof AttemptTerminated)) throw e;
    });
  }

  private async finish(status: "completed" | "failed", error?: { code: string; message: string }): Promise<void> {
    // One batch after the lease check: the last steps, the output, the terminal row and every
    // event (the buffered ones, cancelled steering, the closing frames, the anchor).
    let cancelled: Promise<TNewEvent[]> | null = null;
    await this.commit(
      async (c) => {
        // What the last turns used is committed first; whatever is still queued then is cancelled.
        await this.flushSteering(c);
        this.events.push(...(await (cancelled ?? this.runtime.steering.cancelQueued(c.tx, c.row.id))));
        this.runtime.onSettling?.();
        // The envelope, the boundary frame and the transcript anchor are built before anything is sent.
        await this.flushInto(c, (row, next) => {
          const finished = finishResponse(c.tx, { ...row, activeMs: this.activeMs }, status, { ...(error ? { error } : {}), outputChanged: true });
          const closing: TNewEvent[] = [...(error ? [{ type: "error", data: { error }, frame: true }] : []), { type: "response.completed", data: { ...finished.envelope, responseId: row.id }, frame: true }];
          // The anchor follows the closing events directly: it names the last event before it and the first closing frame.
          // The transcript anchor commits with the envelope: the next turn never reads a half-written one.
          const anchor: TNewEvent = { type: "transcript.anchor", data: { status, lastSeq: next.seq + closing.length - 1, lastFrame: next.frameSeq, outputItems: row.output.length }, frame: false };
          return { stored: finished.stored, events: [...closing, anchor] };
        });
        c.announce({ k: "inbox", change: { kind: "response", responseId: c.row.id } });
      },
      {
        flushFirst: false,
        // With no steering of the last turns to commit and none to reject, queued steering is
        // cancelled beside the lock: one statement, queued behind it before any reply can arrive,
        // so a failed lock rolls it back with the transaction.
        besideLock: (tx) => {
          if (this.steeringWrites.length > 0 || this.runtime.steering.hasRevoked(this.response.id)) return;
          cancelled = cancelQueuedSteering(this.deps, tx, this.response.id);
          cancelled.catch(() => {}); // its own error surfaces where it is awaited
        },
      },
    );
  }

  /**
   * After someone else settled the run (a cancel, a denial, an expiry): what this attempt recorded
   * for the trajectory (its lifecycle, harness facts; never frames, which would follow the
   * terminal one) is appended on its own, so an ended attempt still leaves its record.
   */
  /** Marks in the trajectory that a shutdown's drain window ended this attempt mid-step (another replica adopts the run). */
  async recordInterrupted(hostId: string): Promise<void> {
    this.events.push({ type: "attempt.interrupted", data: { reason: "shutdown", hostId }, frame: false });
    await this.recordAfterEnd();
  }

  async recordAfterEnd(): Promise<void> {
    const events = this.events.splice(0).filter((e) => !e.frame);
    if (events.length > 0) await recordEvents(this.deps, this.response.id, events);
  }

  /** Releases what the attempt holds in this process (its bus subscription, its capabilities). */
  close(): void {
    this.unwatchSteering();
    this.capabilities.close();
  }
}
