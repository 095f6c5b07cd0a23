import { createHash } from "node:crypto";
import { responseStatus } from "../../db/repositories/responses";
import type { TCreatorAuthority } from "../../db/schema/questions";
import { CREDENTIAL_RECHECK_MS, credentialRefusal } from "../auth/credential-status";
import type { TCredential } from "../core/credential";
import { DomainError } from "../core/errors";
import { isTerminal } from "../core/vocabulary";
import { assertInjectionRequest, isAssertionCurrent, type TAssertCurrent, type TInjectionAuthorityKind, type TMessageInjectionV2 } from "../core/runtime";
import { DEFAULT_QUESTION_TIMEOUT_MS } from "../core/ttl";
import { newId } from "../core/ids";
import { QuestionError } from "../core/questions/errors";
import { ZAnswers, ZQuestions } from "../core/questions/schema";
import { askDuringTool } from "./pending/ask-during-tool";
import { recordedReview } from "./review-step";
import type {
  TAsyncWorkContext,
  TAsyncWorkResource,
  TCompactParams,
  TCompactResult,
  TExecAutoReviewDecision,
  TExecReviewRequest,
  THostAuthorityCapabilities,
  TQuestionAuthority,
  TQuestionSubmitOutcome,
  TRetainedSourceAuthority,
} from "../../plugin-sdk/authority";
import { isHint } from "./bus";
import type { TAuthorityAttempt, TAuthorityServices } from "./authority-port";
import type { TDeps } from "./deps";
import type { TRunStarter } from "../ports/run-starter";
import { createSubagentCapabilities } from "./subagents";
import { recordEvents } from "./transact";

const CLOSED = "This attempt has settled; its host capabilities are closed.";
const closedError = () => new DomainError("conflict", CLOSED);

/** Fire-and-forget trajectory facts of the host itself (they may come after the run settled). */
function note(deps: TDeps, responseId: string, type: string, data: Record<string, unknown>): void {
  void recordEvents(deps, responseId, [{ type, data, frame: false }]).catch((error: unknown) => deps.log.warn({ err: error, responseId, type }, "an authority fact could not be recorded"));
}

// --- The run's source --------------------------------------------------------------------------

/** The run as its source sees it: the owner, and the credential that started it (null: the server itself). */
type TSourceRun = { id: string; userId: string; sourceCredential?: TCredential | null };

/**
 * The source of one run in this process: current until the run is cancelled (a person, its
 * deadline), fails, or its attempt is torn down by a shutdown, or until the credential that
 * started the run ends (its API key revoked, its console session signed out or revoked, its user
 * disabled or deleted: announced on the bus by any replica, re-checked every
 * CREDENTIAL_RECHECK_MS as a safety net). Shared by every retained handle and source-bound
 * question of the run (across its attempts), watched while any is held.
 */
class RunSource {
  readonly controller = new AbortController();
  revokedBecause: string | null = null;
  /** Revoked because its credential ended: later retains of the run get this revoked source too. */
  credentialEnded = false;
  holders = 0;
  questions = 0;
  private unwatch: Array<() => void> = [];

  constructor(
    private readonly deps: TDeps,
    private readonly run: TSourceRun,
  ) {
    const responseId = run.id;
    // A settled run announces its terminal frame; a replica's settlement arrives as a hint (then the row is read).
    this.unwatch.push(
      deps.bus.subscribeFrames(responseId, (frame) => {
        if (isHint(frame)) {
          void this.readStatus().catch((error: unknown) => deps.log.warn({ err: error, responseId }, "could not read a run's status for its retained source"));
          return;
        }
        if (frame.type === "response.completed" && typeof frame.status === "string") this.onStatus(frame.status);
      }),
    );
    const credential = run.sourceCredential;
    if (credential) {
      // The same announcement that ends the owner's sockets and streams (a key revoked, a sign-out, a disabled user).
      this.unwatch.push(deps.bus.subscribeCredentials(({ userId }) => userId === run.userId && void this.checkCredential(credential)));
      const timer = setInterval(() => void this.checkCredential(credential), CREDENTIAL_RECHECK_MS);
      timer.unref();
      this.unwatch.push(() => clearInterval(timer));
      void this.checkCredential(credential);
    }
  }

  get responseId(): string {
    return this.run.id;
  }

  private async readStatus(): Promise<void> {
    const status = await responseStatus(this.deps.db, this.run.id);
    if (status) this.onStatus(status);
  }

  private onStatus(status: string): void {
    if (status !== "completed" && isTerminal(status as never)) this.revoke(`the run was ${status}`);
  }

  /** A credential that is gone revokes the source; a changed role does not (the run stays its owner's). */
  private async checkCredential(credential: TCredential): Promise<void> {
    if (this.revokedBecause !== null) return;
    let refusal: DomainError | null;
    try {
      refusal = await credentialRefusal(this.deps.db, credential, this.deps.now());
    } catch (error) {
      // Unreachable database: checked again at the next announcement or sweep.
      this.deps.log.warn({ err: error, responseId: this.run.id }, "could not re-check a run source's credential");
      return;
    }
    if (refusal?.code !== "unauthenticated") return;
    this.credentialEnded = true;
    this.revoke(`the credential that started the run ended: ${refusal.message.replace(/\.$/, "")}`);
  }

  revoke(because: string): void {
    if (this.revokedBecause !== null) return;
    this.revokedBecause = because;
    this.controller.abort(new DomainError("conflict", `The run's source was revoked: ${because}.`));
    if (this.holders > 0 || this.questions > 0) note(this.deps, this.run.id, "authority.revoked", { reason: because, retained: this.holders, questions: this.questions });
    this.stop();
  }

  /** Drops one hold; the last one stops the watch. */
  drop(): void {
    if (this.holders === 0 && this.questions === 0 && this.revokedBecause === null) this.stop();
  }

  stop(): void {
    for (const unwatch of this.unwatch) unwatch();
    this.unwatch = [];
    // A source whose credential ended stays known: the run is never current again here.
    if (sources.get(this.run.id) === this && !this.credentialEnded) sources.delete(this.run.id);
  }
}

const sources = new Map<string, RunSource>();

/** The run's source in this process: the current one, a new one after a revocation by the run's end, or the one whose credential ended. */
function sourceOf(deps: TDeps, run: TSourceRun): RunSource {
  let source = sources.get(run.id);
  if (!source || (source.revokedBecause !== null && !source.credentialEnded)) {
    source = new RunSource(deps, run);
    sources.set(run.id, source);
  }
  return source;
}

/** Retains the run's source: one handle, released once (idempotent). */
function retainSource(deps: TDeps, run: TSourceRun, attemptSignal: AbortSignal): TRetainedSourceAuthority {
  const responseId = run.id;
  const held = sourceOf(deps, run);
  // The attempt's cancellation (a person, its deadline, a shutdown) revokes the source at once.
  const onAbort = () => held.revoke(`the run was cancelled (${(attemptSignal.reason as Error | undefined)?.message ?? "aborted"})`);
  if (attemptSignal.aborted) onAbort();
  else attemptSignal.addEventListener("abort", onAbort, { once: true });
  held.holders++;
  note(deps, responseId, "authority.retained", { holders: held.holders });
  let released = false;
  return {
    assertCurrent: () => {
      if (released) throw new DomainError("conflict", "This retained source authority was released; retain it again while the run is active.");
      if (held.revokedBecause !== null) throw new DomainError("conflict", `The run's source was revoked (${held.revokedBecause}); stop the native work it admitted.`);
    },
    signal: held.controller.signal,
    release: () => {
      if (released) return;
      released = true;
      attemptSignal.removeEventListener("abort", onAbort);
      held.holders--;
      if (held.revokedBecause === null) note(deps, responseId, "authority.released", { holders: held.holders });
      held.drop();
    },
  };
}

/** Holds the run's source while a source-bound question is pending: its answers also need the run's source current. */
function holdForQuestion(deps: TDeps, run: TSourceRun): { current: () => boolean; drop: () => void } {
  const held = sourceOf(deps, run);
  held.questions++;
  let dropped = false;
  return {
    current: () => !dropped && held.revokedBecause === null,
    drop: () => {
      if (dropped) return;
      dropped = true;
      held.questions--;
      held.drop();
    },
  };
}

// --- Source-bound questions --------------------------------------------------------------------

/** The source assertions of source-bound questions asked in this process, by question id. */
const questionSources = new Map<string, () => boolean>();

/**
 * Inside an answer's transaction, right before its claim (no await between): refuses an answer
 * to a source-bound question whose source is no longer current, or is not held by this process
 * (a source-bound input is never accepted unchecked). The question stays pending.
 */
export function assertQuestionSourceCurrent(row: { id: string; creator: TCreatorAuthority }): void {
  if (row.creator.authority !== "source-bound") return;
  const assertCurrent = questionSources.get(row.id);
  let current = false;
  try {
    current = assertCurrent?.() === true;
  } catch {}
  if (current) return;
  throw new QuestionError(
    "QUESTION_REQUESTER_INACTIVE",
    assertCurrent
      ? "The source that asked this question is no longer current; the answer was not used and the question stays pending."
      : "This question is bound to its asker's source, which this server does not hold; the answer was not used.",
  );
}

function checkAuthority(authority: TQuestionAuthority | undefined): TQuestionAuthority {
  if (!authority || (authority.kind !== "unscoped" && authority.kind !== "source-bound")) {
    throw new TypeError(`authority must be { kind: "unscoped" } or { kind: "source-bound", assertCurrent }, got ${JSON.stringify(authority)}.`);
  }
  if (authority.kind === "source-bound" && typeof authority.assertCurrent !== "function") throw new TypeError("A source-bound authority needs a synchronous assertCurrent function.");
  return authority;
}

const holds = (authority: TQuestionAuthority): boolean => {
  if (authority.kind === "unscoped") return true;
  try {
    return authority.assertCurrent() === true;
  } catch {
    return false;
  }
};

/** `signal` aborted when any of `signals` does. */
const anySignal = (...signals: Array<AbortSignal | undefined>): AbortSignal => AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));

/**
 * The reason and sentence of a definitive refusal of an input (the question unchanged), or null
 * for a failure that says nothing about it (unavailable, internal, over capacity).
 */
function definitiveRefusal(error: unknown): { reason: string; message: string } | null {
  if (error instanceof QuestionError) return error.reason === "UNAVAILABLE" ? null : { reason: error.reason, message: error.message };
  if (error instanceof DomainError && error.code !== "internal" && error.code !== "capacity") return { reason: error.code.toUpperCase(), message: error.message };
  return null;
}

/** The services layer the composition root gave the host (spawns, answers, claims). */
function servicesOf(attempt: TAuthorityAttempt): TAuthorityServices {
  const s = attempt.runtime.services?.();
  if (!s) throw new DomainError("conflict", "This server does not provide the host services this capability needs.");
  return s;
}

// --- The capabilities --------------------------------------------------------------------------

/**
 * Builds the authority capabilities of one attempt. `isOpen` is false once the attempt settled:
 * every capability then throws a sentence (fails closed); handles retained before stay until
 * released or revoked.
 */
export function createAuthorityCapabilities(attempt: TAuthorityAttempt, isOpen: () => boolean): THostAuthorityCapabilities {
  const { deps, response } = attempt;
  const gate = () => {
    if (!isOpen()) throw closedError();
  };
  const retain = (): TRetainedSourceAuthority => {
    gate();
    attempt.assertNotCancelled();
    return retainSource(deps, response, attempt.signal);
  };
  const services = () => servicesOf(attempt);
  let compactions = 0;
  let asked = 0;

  const runAsyncWork = async <T>(fn: (ctx: TAsyncWorkContext) => Promise<T>): Promise<T> => {
    gate();
    const source = retain();
    const resources: TAsyncWorkResource[] = [];
    const cleaned = new Set<TAsyncWorkResource>();
    const cleanup = async (which: readonly TAsyncWorkResource[], why: string): Promise<void> => {
      for (const resource of which) {
        if (cleaned.has(resource)) continue;
        cleaned.add(resource);
        try {
          await resource.cleanup();
        } catch (error) {
          // Reported; the resource keeps its custody (nothing else releases it for the plugin).
          note(deps, response.id, "async_work.cleanup_failed", { resource: resource.name ?? null, message: error instanceof Error ? error.message : String(error) });
        }
      }
      if (which.length > 0) note(deps, response.id, "async_work.released", { resources: which.length, why, names: which.map((r) => r.name ?? null) });
    };
    const signal = anySignal(attempt.signal, source.signal);
    // Cancellation, a deadline or a revoked source closes the work's resources at once.
    const onAbort = () => void cleanup([...resources], "aborted");
    signal.addEventListener("abort", onAbort, { once: true });
    const ctx: TAsyncWorkContext = {
      onAcquired: (resource) => {
        if (!resource || typeof resource.cleanup !== "function") throw new TypeError("onAcquired needs a resource with a cleanup function.");
        resources.push(resource);
        if (signal.aborted) void cleanup([resource], "aborted");
      },
      signal,
      assertCurrent: () => {
        attempt.signal.throwIfAborted();
        source.assertCurrent();
      },
    };
    let result: T;
    try {
      result = await fn(ctx);
      signal.throwIfAborted();
    } catch (error) {
      // Timeouts, aborts and failures close their operations immediately.
      signal.removeEventListener("abort", onAbort);
      await cleanup([...resources], "failed");
      source.release();
      throw error;
    }
    signal.removeEventListener("abort", onAbort);
    const before = resources.filter((r) => r.releaseBeforeResultWhenIdle === true);
    const after = resources.filter((r) => r.releaseBeforeResultWhenIdle !== true);
    await cleanup(before, "before-result");
    // The rest never withholds the result; the source stays retained (and cancellation wired) until they released.
    const lateAbort = () => void cleanup(after, "aborted");
    signal.addEventListener("abort", lateAbort, { once: true });
    void cleanup(after, "after-result").finally(() => {
      signal.removeEventListener("abort", lateAbort);
      source.release();
    });
    return result;
  };

  /** How often each exact request was reviewed in this attempt (its recorded verdicts are keyed by request and occurrence). */
  const reviewed = new Map<string, number>();
  const reviewExec = async (request: TExecReviewRequest): Promise<TExecAutoReviewDecision> => {
    gate();
    if (!request || typeof request.command !== "string" || request.command.trim() === "") throw new DomainError("invalid_request", "reviewExec needs the command, a non-empty string.");
    if (request.cwd !== undefined && typeof request.cwd !== "string") throw new DomainError("invalid_request", "reviewExec: cwd must be a string.");
    if (request.env !== undefined && (typeof request.env !== "object" || request.env === null || Object.values(request.env).some((v) => typeof v !== "string"))) {
      throw new DomainError("invalid_request", "reviewExec: env must map names to strings.");
    }
    if (request.reason !== undefined && typeof request.reason !== "string") throw new DomainError("invalid_request", "reviewExec: reason must be a string.");
    attempt.assertNotCancelled();
    const args = { command: request.command, ...(request.cwd !== undefined ? { cwd: request.cwd } : {}), ...(request.env ? { env: { ...request.env } } : {}) };
    // A step keyed by the exact request and how often it was asked: a re-run attempt that asks the
    // same again reads the recorded verdict; a different command is always reviewed afresh.
    const digest = createHash("sha256").update(JSON.stringify([args.command, args.cwd ?? null, Object.entries(args.env ?? {}).sort()])).digest("hex").slice(0, 32);
    const occurrence = (reviewed.get(digest) ?? 0) + 1;
    reviewed.set(digest, occurrence);
    const callId = `harness_review_${digest.slice(0, 12)}_${occurrence}`;
    const verdict = await recordedReview(attempt, `review:harness:${digest}:${occurrence}`, callId, {
      cwd: request.cwd ?? null,
      agent: response.agent,
      toolName: "exec",
      arguments: args,
      ...(request.reason ? { context: request.reason } : {}),
    });
    // In the trajectory now, not with the next commit: the harness acts on it at once.
    await attempt.commit();
    gate();
    return verdict as TExecAutoReviewDecision;
  };

  return {
    retainSourceAuthority: retain,
    reviewExec,
    questions: {
      version: 2,
      ask: async (request) => {
        gate();
        const authority = checkAuthority(request?.authority);
        const parsed = ZQuestions.safeParse(request.questions);
        if (!parsed.success) throw new DomainError("invalid_request", `questions: ${parsed.error.issues[0]?.message ?? "invalid"}.`);
        const timeoutMs = request.timeoutMs ?? DEFAULT_QUESTION_TIMEOUT_MS;
        if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1000) throw new DomainError("invalid_request", "timeoutMs must be an integer of at least 1000.");
        attempt.assertNotCancelled();
        // Checked after every await of the preparation, right before the question is registered.
        if (!holds(authority)) throw new DomainError("conflict", "The source of this question is no longer current; it was not asked.");
        const id = newId("ask");
        // Held before the question exists: an answer racing the registration always finds it. A
        // source-bound answer also needs the run's own source current (its credential not ended).
        const runSource = authority.kind === "source-bound" ? holdForQuestion(deps, response) : null;
        if (authority.kind === "source-bound" && runSource) questionSources.set(id, () => runSource.current() && authority.assertCurrent());
        const callId = `plugin_question_${++asked}`;
        try {
          const outcome = await askDuringTool(
            { deps, host: attempt.runtime.host, responseId: response.id, sessionId: response.sessionId, userId: response.userId, callId, signal: anySignal(attempt.signal, request.signal), timeoutMs },
            { questions: parsed.data, id, sourceBound: authority.kind === "source-bound" },
          );
          return outcome;
        } finally {
          questionSources.delete(id);
          runSource?.drop();
        }
      },
      submit: async (request) => {
        gate();
        const authority = checkAuthority(request?.authority);
        const answers = ZAnswers.safeParse(request.answers);
        if (!answers.success || typeof request.questionId !== "string") throw new DomainError("invalid_request", "submit needs a questionId and answers.");
        const questionId = request.questionId;
        const resolutionId = newId("res");
        // The run's liveness and the input's source, checked by the service right before its commit.
        const assertCurrent = () => isOpen() && !attempt.signal.aborted && holds(authority);
        if (request.signal?.aborted) return { status: "rejected", questionId, reason: "ABORTED", message: "The input was withdrawn before it was sent." };
        const s = services();
        const dispatched = s.resolveQuestion(response.userId, { id: questionId, answers: answers.data, resolutionId, assertCurrent }).then(
          () => ({ kind: "ok" as const }),
          (error: unknown) => ({ kind: "error" as const, error }),
        );
        const lost = new Promise<{ kind: "lost" }>((resolve) => {
          if (request.signal) request.signal.addEventListener("abort", () => resolve({ kind: "lost" }), { once: true });
        });
        const first = await Promise.race([dispatched, lost]);
        if (first.kind === "ok") return { status: "answered", questionId, resolutionId };
        // A definitive refusal releases this input at once; the question is unchanged.
        const refused = first.kind === "error" ? definitiveRefusal(first.error) : null;
        if (refused) return { status: "rejected", questionId, ...refused };
        // The response was lost: recover it from this input's own receipt, within the question's deadline.
        const recovered = await recoverReceipt(s, response.userId, questionId, resolutionId);
        if (recovered !== "unconfirmed") return recovered === "answered" ? { status: "answered", questionId, resolutionId } : { status: "not_consumed", questionId };
        note(deps, response.id, "question.input_unconfirmed", { questionId, replayable: false });
        return { status: "unconfirmed", questionId, resolutionId } satisfies TQuestionSubmitOutcome;
      },
    },
    subagents: createSubagentCapabilities(attempt, { gate, services }),
    compact: async (run) => {
      gate();
      if (typeof run !== "function") throw new TypeError("compact needs the compaction function.");
      const index = ++compactions;
      const result = await attempt.step(`compaction:${index}`, async (record) => {
        // The host keeps the run's source through preparation, native completion and cleanup.
        const source = retain();
        try {
          const assertActive = () => {
            if (!isOpen()) throw closedError();
            attempt.assertNotCancelled();
            source.assertCurrent();
          };
          const params: TCompactParams = { assertActive, retainSourceAuthority: retain, signal: attempt.signal };
          const compacted: TCompactResult = await run(params);
          if (!compacted || typeof compacted.summary !== "string" || compacted.summary.trim() === "") throw new DomainError("invalid_request", "A compaction must return a non-empty summary.");
          assertActive();
          record.event("compaction.completed", {
            compaction: index,
            summaryChars: compacted.summary.length,
            ...(Number.isSafeInteger(compacted.tokensBefore) ? { tokensBefore: compacted.tokensBefore } : {}),
            ...(Number.isSafeInteger(compacted.tokensAfter) ? { tokensAfter: compacted.tokensAfter } : {}),
          });
          return { summary: compacted.summary, tokensBefore: compacted.tokensBefore, tokensAfter: compacted.tokensAfter };
        } finally {
          source.release();
        }
      });
      // Recorded now, not at the next tool call: the compaction is part of the run's record.
      await attempt.commit();
      return result;
    },
    runWithAsyncWorkResources: runAsyncWork,
  };
}

// --- The input the run waits on (V2 claim and cancellation) --------------------------------------

/** The V2 methods of `messageInjectionV2` that settle the input the run waits on. */
export type TPendingInputMethods = Pick<TMessageInjectionV2, "claimPendingUserInputAnswer" | "cancelPendingUserInput">;

/**
 * The seed's optional V2 `claimPendingUserInputAnswer` and `cancelPendingUserInput`, bound to the
 * attempt. Each input carries its own assertion and authority kind to the question's claim: the
 * run's check (the attempt open, not cancelled), the assertion, and for `source-bound` the run's
 * source (its credential not ended) are checked synchronously inside the claim's transaction,
 * right before the conditional update. A refusal leaves the question pending for later input.
 */
export function createPendingInputMethods(attempt: TAuthorityAttempt, isOpen: () => boolean): TPendingInputMethods {
  const { deps, response } = attempt;
  const closed = { status: "rejected" as const, questionId: null, reason: "ATTEMPT_SETTLED", message: CLOSED };
  const services = () => servicesOf(attempt);
  /** Runs one guarded settlement: the run's and the input's checks travel with it to the claim. */
  const guarded = async <T>(assertCurrent: TAssertCurrent, authorityKind: TInjectionAuthorityKind, settle: (current: () => boolean) => Promise<T>): Promise<T> => {
    const source = authorityKind === "source-bound" ? holdForQuestion(deps, response) : null;
    try {
      return await settle(() => isOpen() && !attempt.signal.aborted && (source === null || source.current()) && isAssertionCurrent(assertCurrent));
    } finally {
      source?.drop();
    }
  };
  const refusal = (questionId: string | null, error: unknown) => {
    const refused = definitiveRefusal(error);
    if (!refused) throw error;
    return { status: "rejected" as const, questionId, ...refused };
  };
  return {
    claimPendingUserInputAnswer: async (text, options, assertCurrent, authorityKind) => {
      // A harness's mistake is refused, never claimed unchecked.
      assertInjectionRequest(assertCurrent, authorityKind);
      if (typeof text !== "string") throw new TypeError("claimPendingUserInputAnswer needs the text, a string.");
      const questionId = options?.questionId;
      if (questionId !== undefined && (typeof questionId !== "string" || questionId === "")) throw new TypeError("options.questionId must be a non-empty string.");
      if (!isOpen()) return closed;
      const resolutionId = newId("res");
      try {
        const claimed = await guarded(assertCurrent, authorityKind, (current) =>
          services().claimPendingInput(response.userId, { responseId: response.id, sessionId: response.sessionId, ...(questionId ? { questionId } : {}), text, resolutionId, assertCurrent: current }),
        );
        if (!claimed) return { status: "none" };
        note(deps, response.id, "question.input_claimed", { questionId: claimed.questionId, authorityKind, resolutionId });
        return { status: "answered", questionId: claimed.questionId, resolutionId };
      } catch (error) {
        return refusal(questionId ?? null, error);
      }
    },
    cancelPendingUserInput: async (resolvedBy, assertCurrent, authorityKind) => {
      assertInjectionRequest(assertCurrent, authorityKind);
      if (typeof resolvedBy !== "string" || resolvedBy.trim() === "") throw new TypeError("cancelPendingUserInput needs resolvedBy, a non-empty string naming who resolved the input.");
      if (!isOpen()) return closed;
      try {
        const cancelled = await guarded(assertCurrent, authorityKind, (current) =>
          services().cancelPendingInput(response.userId, { responseId: response.id, sessionId: response.sessionId, resolvedBy, assertCurrent: current }),
        );
        if (!cancelled) return { status: "none" };
        note(deps, response.id, "question.input_cancelled", { questionId: cancelled.questionId, authorityKind, resolvedBy });
        return { status: "cancelled", questionId: cancelled.questionId };
      } catch (error) {
        return refusal(null, error);
      }
    },
  };
}

/** After a lost response: this input's receipt proves it answered; a cancelled or expired question proves it did not. */
async function recoverReceipt(s: TAuthorityServices, ownerId: string, questionId: string, resolutionId: string): Promise<"answered" | "not_consumed" | "unconfirmed"> {
  try {
    // The waiter's own deadline bounds the recovery (no separate, shorter timer).
    const waited = await s.waitAnswer(ownerId, { id: questionId, timeoutMs: 600_000 });
    if (waited.status === "answered") return waited.resolutionId === resolutionId ? "answered" : "unconfirmed";
    if (waited.status === "cancelled" || waited.status === "expired") return "not_consumed";
  } catch {}
  return "unconfirmed";
}

// --- Cross-profile steering ----------------------------------------------------------------------

/**
 * A harness with `supportsCrossProfileSteering: false` keeps steering and answers in its run
 * owner's profile: another person's message or answer is refused (403) before it is queued or
 * committed. Omitted, cross-profile steering stays allowed.
 */
export function assertProfileMaySteer(host: TRunStarter, run: { agent: string; userId: string }, actorUserId: string, what: "steer" | "answer" | "side_question"): void {
  if (actorUserId === run.userId) return;
  if (host.crossProfileSteering?.(run.agent) !== false) return;
  throw new DomainError(
    "forbidden",
    {
      steer: `The harness of agent ${run.agent} does not accept steering from another profile: only the person who started this run can steer it.`,
      answer: `The harness of agent ${run.agent} does not accept answers from another profile: only the person who started this run can answer its questions.`,
      side_question: `The harness of agent ${run.agent} does not accept side questions from another profile: only the person who started this run can ask them.`,
    }[what],
  );
}
