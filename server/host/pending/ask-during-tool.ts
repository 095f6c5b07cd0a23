import { envelopeOf } from "../../../db/repositories/responses";
import { suspendOnHeldQuestion } from "../../../db/repositories/question-runs";
import { newId } from "../../core/ids";
import type { TQuestion } from "../../core/questions/schema";
import type { TToolAskOutcome } from "../../ports/held-question";
import type { TDeps } from "../deps";
import { decryptSecret } from "../secret-store";
import { transact } from "../transact";
import { questionTopic, type TTopic, waitFor } from "../wait-for";
import { expirePending } from "./kinds";
import { announceQuestion, settleRunQuestion } from "./question";
import type { TRunStarter } from "./contract";
import { cancelPendingQuestion, insertQuestion, questionById, secretAnswerRow, toRecords } from "../../../db/repositories/question-records";

/** The running tool call a question is asked for; the run stays `in_progress` while it waits. */
export type TToolAskContext = {
  deps: TDeps;
  /** Where a run resumed by an expiry would start (a held question never resumes one: its call goes on). */
  host: TRunStarter;
  responseId: string;
  sessionId: string;
  userId: string;
  callId: string;
  /** Aborted when the run is cancelled or times out, or the asker stops waiting. */
  signal: AbortSignal;
  timeoutMs: number;
  /**
   * The questions this tool call still holds: the call registers each ask here so that, when it
   * ends (whatever the server did), it can end them and give the run back before the attempt goes on.
   */
  holds?: Set<Promise<unknown>>;
};

const POLL_MS = 5000;

/**
 * Asks a person a question on behalf of a tool call that is still running (e.g. an MCP
 * elicitation). The run waits like any other: in one transaction the question is registered with
 * the creator's authority (user, session, run, tool call), the run turns `requires_action` with
 * `requiredAction.type: "question"` and its boundary frame is written, so the call that started or
 * resumed the run answers at that boundary. The call itself stays in flight and holds the run's
 * lease; the answer (through the ordinary question routes and the answer page) goes back to it and
 * the run turns executing again in the answer's transaction. Waits until the question settles, it
 * expires, or `signal` aborts (then the question is cancelled so nobody answers into the void).
 */
export function askDuringTool(ctx: TToolAskContext, asked: TAsked): Promise<TToolAskOutcome> {
  const held = ask(ctx, asked);
  ctx.holds?.add(held);
  return held.finally(() => ctx.holds?.delete(held));
}

/** `id`: chosen by the caller (e.g. to hold the question's source before it exists); `sourceBound`: stored with the creator. */
type TAsked = { questions: TQuestion[]; id?: string; sourceBound?: boolean };

async function ask(ctx: TToolAskContext, asked: TAsked): Promise<TToolAskOutcome> {
  const { deps } = ctx;
  if (ctx.signal.aborted) return { status: "aborted", questionId: null };
  const id = asked.id ?? newId("ask");
  const inserted = await transact(deps, async (tx, emit, announce) => {
    const pending = { type: "question" as const, id, callId: ctx.callId, hold: true };
    const run = await suspendOnHeldQuestion(tx, ctx.responseId, pending);
    if (!run) return null;
    const row = await insertQuestion(tx, deps.now(), {
      id,
      kind: "gateway",
      questions: asked.questions,
      creator: { userId: ctx.userId, sessionId: ctx.sessionId, responseId: ctx.responseId, callId: ctx.callId, ...(asked.sourceBound ? { authority: "source-bound" as const } : {}) },
      timeoutMs: Math.max(1000, ctx.timeoutMs),
    });
    if (!row) throw new Error("the question could not be registered");
    const [record] = await toRecords(tx, [row]);
    const envelope = envelopeOf(run, "requires_action", { type: "question", id, callId: run.id, questions: row.questions, expiresAt: row.expiresAt.toISOString() });
    await emit(ctx.responseId, [
      { type: "question.requested", data: { question: record }, frame: true, actorUserId: ctx.userId, transport: "system" },
      { type: "response.completed", data: { ...envelope, responseId: run.id }, frame: true },
    ]);
    announceQuestion(announce, row, "pending");
    return row;
  });
  if (!inserted) return { status: "aborted", questionId: null };

  // Woken by the question's changes and by the run's cancellation; polled so its expiry is never missed.
  const topic: TTopic = (wake) => {
    const unsubscribe = questionTopic(deps.bus, id)(wake);
    ctx.signal.addEventListener("abort", wake);
    return () => {
      unsubscribe();
      ctx.signal.removeEventListener("abort", wake);
    };
  };
  const outcome = await waitFor(
    topic,
    async (): Promise<TToolAskOutcome | null> => {
      const row = await questionById(deps.db, id);
      if (!row) return { status: "aborted", questionId: id };
      if (row.status === "answered") return { status: "answered", questionId: id, answers: row.answers ?? {} };
      if (row.status === "expired") return { status: "expired", questionId: id };
      if (row.status === "cancelled") return row.answeredVia === "system" ? { status: "aborted", questionId: id } : { status: "declined", questionId: id };
      // Nobody waits any more: cancel it, unless it settled meanwhile (the next check reports that).
      if (ctx.signal.aborted) return (await cancelPending(ctx, id)) ? { status: "aborted", questionId: id } : null;
      // The host's sweep expires it too; doing it here does not wait for the next sweep.
      if (row.expiresAt.getTime() <= deps.now().getTime()) await expirePending(deps, ctx.host, { type: "question", id }).catch(() => false);
      return null;
    },
    { deadline: Date.now() + Math.max(1000, ctx.timeoutMs) + 60_000, pollMs: POLL_MS },
  );
  return outcome ?? { status: "aborted", questionId: id };
}

/**
 * Cancels the question if it is still pending (by the system: nobody is waiting for it any more);
 * the run, if it still waits on it, turns executing again so its attempt can settle it.
 */
async function cancelPending(ctx: Pick<TToolAskContext, "deps" | "host">, id: string): Promise<boolean> {
  const { deps } = ctx;
  return transact(deps, async (tx, emit, announce) => {
    const row = await cancelPendingQuestion(tx, id, deps.now());
    if (!row) return false;
    // The same settlement path as any answer: a held run goes back to executing.
    await settleRunQuestion(deps, ctx.host, tx, emit, row, { status: "cancelled", system: true }, []);
    announceQuestion(announce, row, "cancelled");
    return true;
  });
}

/**
 * The value of a secret answer of a question asked during a tool call, for that tool only (never
 * for records, frames or the model): the record keeps "stored".
 */
export async function secretAnswer(deps: TDeps, questionId: string, answerKey: string): Promise<string | null> {
  const row = await secretAnswerRow(deps.db, questionId, answerKey);
  return row ? decryptSecret(deps.secretKey, row.ciphertext, `${row.questionId}/${row.answerKey}`) : null;
}
