import { and, eq } from "drizzle-orm";
import { lockActive } from "../../db/repositories/responses";
import { questions, secretValues } from "../../db/schema";
import { newId } from "../core/ids";
import type { TAnswers, TQuestion } from "../core/questions/schema";
import type { TDeps } from "../host/deps";
import { decryptSecret } from "../host/secret-store";
import { transact } from "../host/transact";
import { expireQuestion } from "../services/questions/expire-question";
import { toRecords } from "../services/questions/records";
import { insertQuestion } from "../services/questions/request-question";

/** The running tool call a question is asked for; the run stays `in_progress` while it waits. */
export type TToolAskContext = {
  deps: TDeps;
  responseId: string;
  sessionId: string;
  userId: string;
  callId: string;
  /** Aborted when the run is cancelled or times out, or the asker stops waiting. */
  signal: AbortSignal;
  timeoutMs: number;
};

/** How a question asked during a tool call settled. */
export type TToolAskOutcome =
  | { status: "answered"; questionId: string; answers: TAnswers }
  /** A person cancelled it (the answer page's "decline"). */
  | { status: "declined"; questionId: string }
  | { status: "expired"; questionId: string }
  /** The run or the asker went away (or the run was no longer executing): nobody can answer any more. */
  | { status: "aborted"; questionId: string | null };

const POLL_MS = 5000;

/**
 * Asks a person a question on behalf of a tool call that is still running (e.g. an MCP
 * elicitation): the question is registered with the creator's authority (user, session, run, tool
 * call) and its `question.requested` frame in one transaction, only while the run is executing,
 * and is answered through the ordinary question routes and the answer page. The run is not
 * suspended (the call is in flight), so the question is a Gateway question linked to the run:
 * its answer goes back to the waiting tool, not into the step log. Waits until it settles, it
 * expires, or `signal` aborts (then the question is cancelled so nobody answers into the void).
 */
export async function askDuringTool(ctx: TToolAskContext, asked: { questions: TQuestion[] }): Promise<TToolAskOutcome> {
  const { deps } = ctx;
  if (ctx.signal.aborted) return { status: "aborted", questionId: null };
  const id = newId("ask");
  const inserted = await transact(deps, async (tx, emit) => {
    if (!(await lockActive(tx, ctx.responseId))) return null;
    const row = await insertQuestion(tx, deps, {
      id,
      kind: "gateway",
      questions: asked.questions,
      creator: { userId: ctx.userId, sessionId: ctx.sessionId, responseId: ctx.responseId, callId: ctx.callId },
      timeoutMs: Math.max(1000, ctx.timeoutMs),
    });
    if (!row) return null;
    const [record] = await toRecords(tx, [row]);
    await emit(ctx.responseId, [{ type: "question.requested", data: { question: record }, frame: true, actorUserId: ctx.userId, transport: "system" }]);
    return row;
  });
  if (!inserted) return { status: "aborted", questionId: null };
  deps.bus.publishQuestion({ questionId: id, status: "pending" });
  deps.bus.publishInbox({ kind: "question", responseId: ctx.responseId, id });

  let wake: (() => void) | null = null;
  const unsubscribe = deps.bus.subscribeQuestion((change) => {
    if (change.questionId === id) wake?.();
  });
  const onAbort = () => wake?.();
  ctx.signal.addEventListener("abort", onAbort);
  try {
    for (;;) {
      const changed = new Promise<void>((resolve) => {
        wake = resolve;
      });
      const [row] = await deps.db.select().from(questions).where(eq(questions.id, id));
      if (!row) return { status: "aborted", questionId: id };
      if (row.status === "answered") return { status: "answered", questionId: id, answers: row.answers ?? {} };
      if (row.status === "expired") return { status: "expired", questionId: id };
      if (row.status === "cancelled") return row.answeredVia === "system" ? { status: "aborted", questionId: id } : { status: "declined", questionId: id };
      if (ctx.signal.aborted) {
        if (await cancelPending(deps, id)) return { status: "aborted", questionId: id };
        continue; // settled meanwhile: report what it settled as
      }
      if (row.expiresAt.getTime() <= deps.now().getTime()) {
        // The host's sweep expires it too; doing it here does not wait for the next sweep.
        await expireQuestion(deps, id).catch(() => false);
        continue;
      }
      let timer: NodeJS.Timeout | undefined;
      const left = Math.max(50, Math.min(POLL_MS, row.expiresAt.getTime() - deps.now().getTime() + 50));
      await Promise.race([changed, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
  } finally {
    unsubscribe();
    ctx.signal.removeEventListener("abort", onAbort);
  }
}

/** Cancels the question if it is still pending (by the system: nobody is waiting for it any more). */
async function cancelPending(deps: TDeps, id: string): Promise<boolean> {
  const [row] = await deps.db
    .update(questions)
    .set({ status: "cancelled", answeredVia: "system", resolvedAt: deps.now() })
    .where(and(eq(questions.id, id), eq(questions.status, "pending")))
    .returning({ id: questions.id, responseId: questions.responseId });
  if (!row) return false;
  deps.bus.publishQuestion({ questionId: id, status: "cancelled" });
  deps.bus.publishInbox({ kind: "question", responseId: row.responseId, id });
  return true;
}

/**
 * The value of a secret answer of a question asked during a tool call, for that tool only (never
 * for records, frames or the model): the record keeps "stored".
 */
export async function secretAnswer(deps: TDeps, questionId: string, answerKey: string): Promise<string | null> {
  const [row] = await deps.db
    .select()
    .from(secretValues)
    .where(and(eq(secretValues.questionId, questionId), eq(secretValues.answerKey, answerKey)));
  return row ? decryptSecret(deps.secretKey, row.ciphertext, `${row.questionId}/${row.answerKey}`) : null;
}
