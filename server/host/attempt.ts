import { and, eq, ne } from "drizzle-orm";
import type { Db } from "../../db/client";
import { approvalAction, clientToolAction, envelopeOf, finishResponse, lockActive, type TResponseRow } from "../../db/repositories/responses";
import { approvals, clientToolRequests, questions, responseSteps, responses } from "../../db/schema";
import { deriveQuestionId } from "../core/questions/schema";
import { insertQuestion } from "../services/questions/request-question";
import { toRecords } from "../services/questions/records";
import type { TQuestionTool, TSettledQuestion } from "../tools/types";
import type { TAgentConfig } from "../agents/config";
import { bindingHash } from "../core/binding";
import type { TOutputItem, TRequiredAction } from "../core/envelope";
import type { TNewEvent } from "../core/frames";
import { newId } from "../core/ids";
import type { TAttemptCancellation, TRunUsageAccumulator, TToolResultMiddlewareRegistry } from "../core/runtime";
import { reviewRequestFor, reviewWithFallback, type TReviewVerdict } from "../reviewer";
import { snapshotNodeCommands, type TNodeInvokeArgs } from "../devices/node-invoke-tool";
import { runDeviceTool, type TDeviceToolHost } from "../devices/run-device-tool";
import { approvalPolicyFor } from "../mcp/policy";
import { findMcpTool } from "../mcp/tools";
import { operationHash } from "../core/decision";
import { requiredApprovalsFor } from "../core/separation-of-duties";
import { approvedOutcome, claimGrant, RepliedInstead, replyResult, type TApprovalOutcome, type TApprovedEdit, withEditNotice } from "./approval-outcome";
import { createHostCapabilities } from "./capabilities";
import type { TDeps } from "./deps";
import { confineCwd, confineToolCwd } from "./workspace";
import type { SteeringDesk, TTakenSteering } from "./steering";
import { type TEmit, transact } from "./transact";

/** Thrown to unwind a harness when the attempt suspended on a committed pending action. */
export class AttemptSuspended extends Error {}
/** Thrown to unwind a harness when a decision, cancel or expiry already settled the response. */
export class AttemptTerminated extends Error {}

/** What a step may record: frames and output items, committed with the step's result. */
export type TStepRecorder = {
  frame: (type: string, data: Record<string, unknown>) => void;
  /**
   * Commits a frame now, in its own small transaction (guarded like every write: a settled
   * response throws AttemptTerminated), e.g. text deltas while the model streams. Not part of
   * the step's result: a replay does not repeat it.
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

type TStepRow = typeof responseSteps.$inferSelect;

/** The runtime id tool-result middleware targets for harnesses hosted by Countersign. */
export const HOST_RUNTIME_ID = "countersign";

/** What the host gives each attempt besides the database: cancellation, steering, middleware, observers, usage. */
export type TAttemptRuntime = {
  cancellation: TAttemptCancellation;
  steering: SteeringDesk;
  middleware: TToolResultMiddlewareRegistry;
  usage: TRunUsageAccumulator;
};

/** A tool result that reports a failure (an error, a non-zero exit, a timeout). */
const isFailedResult = (output: unknown): boolean => {
  if (output === null || typeof output !== "object") return false;
  const o = output as Record<string, unknown>;
  return "error" in o || (typeof o.exitCode === "number" && o.exitCode !== 0) || o.exitCode === null || o.timedOut === true;
};

/**
 * One run of a harness over a response. Completed steps are replayed from the step log, so a
 * resumed attempt re-enters after the last completed step and never re-runs a tool.
 */
export class Attempt {
  private steps = new Map<string, TStepRow>();
  /** The versioned host capabilities handed to the harness; closed when the attempt settles. */
  readonly capabilities: ReturnType<typeof createHostCapabilities>;
  readonly signal: AbortSignal;
  /** The harness's declared node commands, copied now: mutating the agent config later cannot widen them. */
  readonly requiredNodeCommands: readonly string[] | null;

  constructor(
    private readonly deps: TDeps,
    readonly response: TResponseRow,
    readonly agent: TAgentConfig,
    readonly workspaceDir: string,
    readonly runtime: TAttemptRuntime,
  ) {
    this.signal = runtime.cancellation.signal;
    this.requiredNodeCommands = snapshotNodeCommands(agent);
    this.capabilities = createHostCapabilities({
      deps,
      responseId: response.id,
      sessionId: response.sessionId,
      userId: response.userId,
      reportOutputTokens: runtime.usage.capability(),
      steering: runtime.steering,
      isRunLive: () => runtime.cancellation.isAdmissionOpen(),
    });
  }

  /**
   * Takes the steering messages for model turn `turn`, to be called right before the model: revoked
   * ones are rejected, and the rest are re-checked synchronously as the last act before the caller
   * dispatches them. Pass the claim to `record.steering` so it commits with the turn that used it.
   */
  async claimSteering(turn: number): Promise<TSteeringClaim> {
    const desk = this.runtime.steering;
    const taken = await this.write((tx, emit) => desk.take(tx, emit, this.response.id, turn, () => this.runtime.cancellation.isAdmissionOpen()));
    const { dispatched, revoked } = desk.recheck(taken);
    return { turn, dispatched, revoked, texts: dispatched.map((d) => d.text) };
  }

  /** Throws the cancellation reason (timeout, user, shutdown) once the attempt was cancelled. */
  assertNotCancelled(): void {
    this.signal.throwIfAborted();
  }

  get input(): unknown {
    return this.response.input;
  }

  /** Loads the step log; call once before the harness runs. */
  async load(): Promise<void> {
    const rows = await this.deps.db.select().from(responseSteps).where(eq(responseSteps.responseId, this.response.id));
    for (const row of rows) this.steps.set(row.key, row);
  }

  /** Runs `fn` once per key for the life of the response; later runs return the stored result. */
  async step<T>(key: string, fn: (record: TStepRecorder) => Promise<T>): Promise<T> {
    const done = this.steps.get(key);
    if (done?.status === "completed") return done.result as T;
    const events: TNewEvent[] = [];
    const items: TOutputItem[] = [];
    const usage = { inputTokens: 0, outputTokens: 0 };
    let steering: { claim: TSteeringClaim; used: boolean } | null = null;
    const result = await fn({
      frame: (type, data) => events.push({ type, data, frame: true }),
      liveFrame: async (type, data) => {
        await this.write(async (_tx, emit, row) => {
          await emit(row.id, [{ type, data, frame: true }]);
        });
      },
      event: (type, data) => events.push({ type, data, frame: false }),
      item: (item) => items.push(item),
      usage: (u) => {
        usage.inputTokens += Number.isSafeInteger(u.inputTokens) && (u.inputTokens ?? 0) > 0 ? (u.inputTokens as number) : 0;
        // Live output-token usage goes through the capability: invalid or late reports count for nothing.
        if (u.outputTokens !== undefined && this.capabilities.reportOutputTokens(u.outputTokens)) usage.outputTokens += u.outputTokens;
      },
      steering: (claim, used) => {
        steering = { claim, used };
      },
    });
    await this.commitStep(key, result, events, items, usage, steering);
    return result;
  }

  private async commitStep(
    key: string,
    result: unknown,
    events: TNewEvent[],
    items: TOutputItem[],
    usage: { inputTokens: number; outputTokens: number },
    steering: { claim: TSteeringClaim; used: boolean } | null = null,
  ): Promise<void> {
    await this.write(async (tx, emit, row) => {
      // A message commits with the turn that used it; a turn that never came uses nothing (it stays queued).
      if (steering) {
        const { claim, used } = steering;
        await this.runtime.steering.commitTaken(tx, emit, row.id, claim.turn, used ? claim.dispatched : [], claim.revoked);
      }
      const total = { inputTokens: row.usage.inputTokens + usage.inputTokens, outputTokens: row.usage.outputTokens + usage.outputTokens };
      await tx
        .update(responses)
        .set({ output: [...row.output, ...items], usage: total })
        .where(eq(responses.id, row.id));
      await tx
        .insert(responseSteps)
        .values({ responseId: row.id, key, status: "completed", result: result ?? null, completedAt: new Date() })
        .onConflictDoUpdate({
          target: [responseSteps.responseId, responseSteps.key],
          set: { status: "completed", result: result ?? null, completedAt: new Date() },
        });
      const all = [...events];
      if (usage.outputTokens > 0) {
        all.push({ type: "response.usage", data: { outputTokens: usage.outputTokens, totalOutputTokens: total.outputTokens }, frame: true });
      }
      await emit(row.id, all);
    });
    this.steps.set(key, { responseId: this.response.id, key, status: "completed", result, createdAt: new Date(), completedAt: new Date() });
  }

  /** A transaction that first locks the still-executing response; a settled response ends the attempt. */
  private async write<T>(fn: (tx: Db, emit: TEmit, row: TResponseRow) => Promise<T>): Promise<T> {
    return transact(this.deps, async (tx, emit) => {
      const row = await lockActive(tx, this.response.id);
      if (!row) throw new AttemptTerminated();
      return fn(tx, emit, row);
    });
  }

  /** Runs one tool call: suspends for approval or the client, executes at most once, records the result. */
  async runTool(call: TToolCall, context?: string): Promise<unknown> {
    const key = `tool:${call.id}`;
    const done = this.steps.get(key);
    if (done?.status === "completed") return done.result;
    if (done?.status === "running") {
      // The process died while this ran: we cannot know its effect, so we never run it again.
      return this.recordToolResult(call, { error: "The server stopped while this tool was running; it was not run again." });
    }
    // A cancelled or timed-out attempt starts no new tool (and asks nobody for approval).
    this.assertNotCancelled();
    const tool = this.agent.tools.find((t) => t.name === call.name) ?? (await findMcpTool(this.deps, this, call));
    if (!tool) return this.recordToolResult(call, { error: `Unknown tool: ${call.name}.` });
    const parsed = tool.argsSchema.safeParse(call.arguments ?? {});
    if (!parsed.success) {
      return this.recordToolResult(call, { error: `Invalid arguments for ${call.name}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ")}` });
    }
    const args = parsed.data;
    if (tool.kind === "client") return this.awaitClientTool(call, args, tool);
    if (tool.kind === "question") return this.awaitQuestion(call, args, tool);
    if (tool.kind === "device") {
      return runDeviceTool(this.deviceToolHost(call), args as TNodeInvokeArgs).catch((error: unknown) => {
        if (error instanceof RepliedInstead) return this.recordToolResult(call, replyResult(error.reply));
        throw error;
      });
    }
    let runArgs = args;
    // The working directory is confined to the workspace before anyone is asked; refused otherwise.
    const requested = confineToolCwd(tool, args, this.workspaceDir);
    if (!requested.ok) return this.recordToolResult(call, { error: `${requested.message} The command was not run.` });
    let cwd = requested.cwd;
    let edit: TApprovedEdit | null = null;
    const policy = approvalPolicyFor(this.agent, tool);
    const authorize = async (verdict: TReviewVerdict | null) => {
      const outcome = await this.awaitApproval(call, args, cwd, tool, verdict);
      if ("reply" in outcome) return outcome.reply;
      if (outcome.edit) {
        runArgs = outcome.edit.arguments;
        cwd = outcome.edit.cwd;
        edit = outcome.edit;
      }
      return null;
    };
    if (policy === "always") {
      const reply = await authorize(null);
      if (reply !== null) return this.recordToolResult(call, replyResult(reply));
    } else if (policy === "review") {
      const verdict = await this.review(call, args, cwd, tool, context);
      // deny is final and goes back to the agent; it is never escalated to a person.
      if (verdict.decision === "deny") {
        return this.recordToolResult(call, {
          error: "The exec reviewer denied this command; it was not run.",
          decision: "deny",
          risk: verdict.risk,
          rationale: verdict.rationale,
          guidance: verdict.guidance,
        });
      }
      if (verdict.decision === "ask") {
        const reply = await authorize(verdict);
        if (reply !== null) return this.recordToolResult(call, replyResult(reply));
      }
    }
    await this.write(async (tx) => {
      await tx.insert(responseSteps).values({ responseId: this.response.id, key, status: "running" });
    });
    let failed = false;
    // Re-resolved right before the call: a directory swapped for a symlink since the approval is refused.
    const runCwd = cwd === null ? null : confineCwd(this.workspaceDir, cwd);
    const output =
      runCwd !== null && !runCwd.ok
        ? { error: `${runCwd.message} The command was not run.` }
        : await tool.execute(runArgs, { ...this.toolContext(), cwd: runCwd?.absolute ?? null }).catch((error: unknown) => {
            failed = true;
            return { error: error instanceof Error ? error.message : String(error) };
          });
    const result = await this.applyMiddleware(call, output, failed || isFailedResult(output));
    return this.recordToolResult(call, edit ? withEditNotice(result, args, edit) : result);
  }

  /** What a host tool may use while it runs: the run's identity, its workspace and the sandbox with the agent's allowances. */
  private toolContext() {
    const r = this.response;
    const exec = { sandbox: this.deps.sandbox, network: this.agent.exec?.network ?? false, env: this.agent.exec?.env ?? [] };
    return { workspaceDir: this.workspaceDir, signal: this.signal, userId: r.userId, sessionId: r.sessionId, responseId: r.id, exec };
  }

  /**
   * Runs the tool-result middleware registered for this runtime before the model sees the
   * result; a rewritten result keeps the original execution failure visible.
   */
  private async applyMiddleware(call: TToolCall, output: unknown, isError: boolean): Promise<unknown> {
    const applied = await this.runtime.middleware.apply(HOST_RUNTIME_ID, { toolName: call.name, callId: call.id, result: output, isError });
    if (applied.appliedBy.length === 0 && applied.skipped.length === 0) return output;
    this.capabilities.trajectory.recordEvent("tool_result.middleware", { callId: call.id, appliedBy: applied.appliedBy, skipped: applied.skipped.length });
    // Only skipped (failing) middleware: the result goes on exactly as the tool returned it.
    if (applied.appliedBy.length === 0) return output;
    if (!applied.isError) return applied.result;
    const base = applied.result !== null && typeof applied.result === "object" && !Array.isArray(applied.result) ? applied.result : { result: applied.result };
    return { ...base, isError: true, ...(applied.originalError !== undefined ? { originalError: applied.originalError } : {}) };
  }

  private async recordToolResult(call: TToolCall, output: unknown, events: ReadonlyArray<{ type: string; data: Record<string, unknown> }> = []): Promise<unknown> {
    return this.step(`tool:${call.id}`, async (record) => {
      for (const e of events) record.event(e.type, e.data);
      record.item({ type: "tool_result", callId: call.id, name: call.name, output });
      record.frame("response.tool_result", { callId: call.id, name: call.name, output });
      return output;
    });
  }

  /** What a device tool call (server/devices/run-device-tool.ts) may use of this attempt. */
  private deviceToolHost(call: TToolCall): TDeviceToolHost {
    return {
      deps: this.deps,
      response: this.response,
      callId: call.id,
      signal: this.signal,
      requiredNodeCommands: this.requiredNodeCommands,
      awaitApproval: async (args, target) => {
        const outcome = await this.awaitApproval(call, args, null, target, null);
        if ("reply" in outcome) throw new RepliedInstead(outcome.reply);
      },
      markRunning: () =>
        this.write(async (tx) => {
          await tx.insert(responseSteps).values({ responseId: this.response.id, key: `tool:${call.id}`, status: "running" });
        }),
      finish: async (output, event) => this.recordToolResult(call, await this.applyMiddleware(call, output, isFailedResult(output)), [event]),
    };
  }

  /**
   * Asks the exec reviewer once per tool call (the verdict is a step, so a resumed attempt reuses
   * it); an identical later call is reviewed again. Every verdict is a trajectory frame.
   */
  private async review(call: TToolCall, args: unknown, cwd: string | null, tool: { name: string }, context?: string): Promise<TReviewVerdict> {
    return this.step(`review:${call.id}`, async (record) => {
      const request = reviewRequestFor({ cwd, workspace: this.workspaceDir, agent: this.agent.name, toolName: tool.name, arguments: args, context });
      const verdict = await reviewWithFallback(this.deps.reviewer, request, this.signal);
      record.frame("review.verdict", { callId: call.id, toolName: tool.name, ...verdict });
      return verdict;
    });
  }

  private async awaitApproval(
    call: TToolCall,
    args: unknown,
    cwd: string | null,
    tool: { name: string; action: string; describe: (a: unknown, c: string | null) => string; risk: (a: unknown) => "low" | "medium" | "high" },
    verdict: TReviewVerdict | null,
  ): Promise<TApprovalOutcome> {
    const r = this.response;
    const hash = bindingHash({ userId: r.userId, sessionId: r.sessionId, responseId: r.id, callId: call.id, action: tool.action, arguments: args, cwd });
    const [existing] = await this.deps.db
      .select()
      .from(approvals)
      .where(and(eq(approvals.responseId, r.id), eq(approvals.callId, call.id)));
    if (existing?.status === "approved") return approvedOutcome(existing, hash);
    if (existing?.status === "denied" && existing.replyMessage !== null) return { reply: existing.replyMessage };
    if (existing?.status === "pending") {
      await this.suspendAgain();
      throw new AttemptSuspended();
    }
    if (existing) throw new AttemptTerminated();
    if (await this.spendGrant(call, tool.action, args)) return { edit: null };
    const risk = verdict?.risk ?? tool.risk(args);
    await this.write(async (tx, emit, row) => {
      const [approval] = await tx
        .insert(approvals)
        .values({
          id: newId("approval"),
          responseId: r.id,
          sessionId: r.sessionId,
          userId: r.userId,
          callId: call.id,
          toolName: tool.name,
          action: tool.action,
          arguments: args,
          cwd,
          bindingHash: hash,
          risk,
          requiredApprovals: requiredApprovalsFor(this.agent.quorum, risk),
          message: tool.describe(args, cwd),
          reviewer: verdict?.reviewer ?? null,
          reviewerRationale: verdict?.rationale ?? null,
          expiresAt: new Date(this.deps.now().getTime() + r.approvalTtlMs),
        })
        .returning();
      if (!approval) throw new Error("approval insert returned nothing");
      await this.suspend(tx, emit, row, { type: "approval.requested", data: { approval: approvalAction(approval) }, frame: true }, approvalAction(approval));
    });
    this.deps.bus.publishInbox({ kind: "approval", responseId: r.id });
    throw new AttemptSuspended();
  }

  /**
   * Runs a call without a prompt when a standing grant covers this exact operation; the use is a
   * step (a resumed attempt does not count it twice) and a `grant.used` trajectory event naming the grant.
   */
  private async spendGrant(call: TToolCall, action: string, args: unknown): Promise<boolean> {
    const key = `grant:${call.id}`;
    if (this.steps.get(key)?.status === "completed") return true;
    // Only the kinds of grant the agent allows now: turning one off stops the existing ones too.
    const scopes = [...(this.agent.grants?.session ? (["session"] as const) : []), ...(this.agent.grants?.maxDays ? (["days"] as const) : [])];
    if (scopes.length === 0) return false;
    const r = this.response;
    const hash = operationHash({ userId: r.userId, agent: this.agent.name, action, arguments: args });
    const used = await this.write(async (tx, emit, row) => {
      const grant = await claimGrant(tx, { userId: r.userId, agent: this.agent.name, operationHash: hash, sessionId: r.sessionId, scopes, now: this.deps.now() });
      if (!grant) return null;
      const result = { grantId: grant.id };
      await tx.insert(responseSteps).values({ responseId: row.id, key, status: "completed", result, completedAt: new Date() });
      await emit(row.id, [
        { type: "grant.used", data: { grantId: grant.id, callId: call.id, toolName: call.name, action, scope: grant.scope, uses: grant.uses }, frame: false },
      ]);
      return result;
    });
    if (!used) return false;
    this.steps.set(key, { responseId: r.id, key, status: "completed", result: used, createdAt: new Date(), completedAt: new Date() });
    return true;
  }

  private async awaitClientTool(call: TToolCall, args: unknown, tool: { name: string; handlePrivateInput?: unknown; inputJsonSchema?: unknown }): Promise<never> {
    const r = this.response;
    const [existing] = await this.deps.db
      .select()
      .from(clientToolRequests)
      .where(and(eq(clientToolRequests.responseId, r.id), eq(clientToolRequests.callId, call.id)));
    if (existing?.status === "pending") {
      await this.suspendAgain();
      throw new AttemptSuspended();
    }
    if (existing) throw new AttemptTerminated();
    await this.write(async (tx, emit, row) => {
      const [request] = await tx
        .insert(clientToolRequests)
        .values({
          id: newId("client_tool"),
          responseId: r.id,
          sessionId: r.sessionId,
          userId: r.userId,
          callId: call.id,
          name: tool.name,
          arguments: args,
          privateInput: Boolean(tool.handlePrivateInput),
          inputSchema: tool.handlePrivateInput ? (tool.inputJsonSchema ?? null) : null,
          expiresAt: new Date(this.deps.now().getTime() + r.clientToolTtlMs),
        })
        .returning();
      if (!request) throw new Error("client tool insert returned nothing");
      const action = clientToolAction(request);
      await this.suspend(tx, emit, row, { type: "client_tool.requested", data: { clientTool: action }, frame: true }, action);
    });
    this.deps.bus.publishInbox({ kind: "client_tool", responseId: r.id });
    throw new AttemptSuspended();
  }

  /**
   * Asks a person through a Gateway question whose id is derived from the run and the tool
   * call, so a retried call finds the same question. One pending question per session.
   */
  private async awaitQuestion(call: TToolCall, args: unknown, tool: TQuestionTool): Promise<unknown> {
    const compiled = tool.compile(args);
    if (!compiled.ok) return this.recordToolResult(call, compiled.result);
    const r = this.response;
    const id = deriveQuestionId(r.id, call.id);
    const [existing] = await this.deps.db.select().from(questions).where(eq(questions.id, id));
    if (existing?.status === "pending") {
      await this.suspendAgain();
      throw new AttemptSuspended();
    }
    if (existing) {
      // Settled while no run was waiting (e.g. the run was being adopted): present it now.
      const settled: TSettledQuestion =
        existing.status === "answered"
          ? { status: "answered", answers: existing.answers ?? {} }
          : existing.status === "expired"
            ? { status: "expired", message: "Nobody answered before the deadline." }
            : { status: "cancelled", system: existing.answeredVia === "system" };
      return this.recordToolResult(call, tool.present(args, existing.questions, settled));
    }
    const busy = await this.write(async (tx, emit, row) => {
      const [pending] = await tx
        .select({ id: questions.id })
        .from(questions)
        .where(and(eq(questions.sessionId, r.sessionId), eq(questions.status, "pending"), ne(questions.kind, "gateway")));
      if (pending) return true;
      const question = await insertQuestion(tx, this.deps, {
        id,
        kind: tool.questionKind,
        questions: compiled.questions,
        creator: { userId: r.userId, sessionId: r.sessionId, responseId: r.id, callId: call.id },
        timeoutMs: compiled.timeoutMs,
      });
      // Another run of the session registered its question concurrently: this one is busy too.
      if (!question) return true;
      const [record] = await toRecords(tx, [question]);
      const action: TRequiredAction = { type: "question", id, callId: r.id, questions: question.questions, expiresAt: question.expiresAt.toISOString() };
      await this.suspend(tx, emit, row, { type: "question.requested", data: { question: record }, frame: true }, action);
      return false;
    });
    if (busy) return this.recordToolResult(call, { error: "Another question is already waiting for an answer in this session; wait for it before asking again." });
    this.deps.bus.publishQuestion({ questionId: id, status: "pending" });
    this.deps.bus.publishInbox({ kind: "question", responseId: r.id, id });
    throw new AttemptSuspended();
  }

  /** Commits the suspension: the pending row (already inserted), its event, the status and the boundary frame. */
  private async suspend(tx: Db, emit: TEmit, row: TResponseRow, requested: TNewEvent, action: TRequiredAction) {
    await tx.update(responses).set({ status: "requires_action", leaseOwner: null, leaseExpiresAt: null }).where(eq(responses.id, row.id));
    const envelope = envelopeOf(row, "requires_action", action);
    await emit(row.id, [requested, { type: "response.completed", data: { ...envelope, responseId: row.id }, frame: true }]);
  }

  /** Woken while the action is still pending (e.g. adopted at boot): go back to waiting. */
  private async suspendAgain(): Promise<void> {
    await this.deps.db
      .update(responses)
      .set({ status: "requires_action", leaseOwner: null, leaseExpiresAt: null })
      .where(and(eq(responses.id, this.response.id), eq(responses.status, "in_progress")));
  }

  /** Marks the response completed with its envelope and boundary frame (after flushing the trajectory). */
  async complete(): Promise<void> {
    await this.capabilities.trajectory.flush();
    await this.write(async (tx, emit, row) => {
      await this.runtime.steering.cancelQueued(tx, emit, row.id);
      const envelope = await finishResponse(tx, row, "completed");
      await emit(row.id, [{ type: "response.completed", data: { ...envelope, responseId: row.id }, frame: true }]);
    });
  }

  /** Marks the response failed; the error message is a sentence, never a stack trace. */
  async fail(error: { code: string; message: string }): Promise<void> {
    await this.capabilities.trajectory.flush().catch(() => {});
    await this.write(async (tx, emit, row) => {
      await this.runtime.steering.cancelQueued(tx, emit, row.id);
      const envelope = await finishResponse(tx, row, "failed", { error });
      await emit(row.id, [
        { type: "error", data: { error }, frame: true },
        { type: "response.completed", data: { ...envelope, responseId: row.id }, frame: true },
      ]);
    }).catch((e: unknown) => {
      if (!(e instanceof AttemptTerminated)) throw e;
    });
  }
}
