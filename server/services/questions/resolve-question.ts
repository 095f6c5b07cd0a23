import { z } from "zod";
import { runAgentAndOwner, runStatus } from "../../../db/repositories/question-runs";
import { type TActor, canDecide } from "../../core/actor";
import { refused } from "../../core/errors";
import { personLabel } from "../../core/person";
import { checkAnswers } from "../../core/questions/answers";
import { QuestionError } from "../../core/questions/errors";
import { STORED, type TAnswers, ZAnswers, ZResolutionId, isSecretKey } from "../../core/questions/schema";
import type { TTransport } from "../../core/vocabulary";
import type { TDeps, TRunDeps } from "../../host/deps";
import { expirePending } from "../../host/pending/kinds";
import { announceQuestion, settleRunQuestion } from "../../host/pending/question";
import { assertProfileMaySteer, assertQuestionSourceCurrent } from "../../host/authority";
import type { TSettledQuestion } from "../../tools/types";
import { storeSecret } from "../../host/secret-store";
import { transact } from "../../host/transact";
import { questionById, settlePendingQuestion, type TQuestionRow, toRecords, visibleQuestion } from "../../../db/repositories/question-records";

/** `question.resolve` params: answers, or `cancel: true`. */
export const ZResolveParams = z.union([
  z.strictObject({ id: z.string().min(1), answers: ZAnswers, resolvedBy: z.string().min(1).optional(), resolutionId: ZResolutionId.optional() }),
  z.strictObject({ id: z.string().min(1), cancel: z.literal(true), resolvedBy: z.string().min(1).optional() }),
]);

export type TResolveInput = z.infer<typeof ZResolveParams> & {
  via: TTransport;
  /**
   * The source's authority, checked synchronously right before the commit (after every await):
   * false or throwing refuses this input only; the question stays pending.
   */
  assertCurrent?: () => boolean;
};

export type TResolveResult = { status: "answered"; answers: TAnswers } | { status: "cancelled" };

/** The details a losing answerer sees: who settled the question, and when. */
export async function settledQuestionError(deps: TDeps, row: TQuestionRow): Promise<QuestionError> {
  const [record] = await toRecords(deps.db, [row]);
  return new QuestionError("QUESTION_ALREADY_TERMINAL", { code: "questionSettled", params: { status: row.status, by: record?.answeredBy ? personLabel(record.answeredBy) : "" } }, {
    status: row.status,
    answeredBy: record?.answeredBy ?? null,
    answeredAt: record?.answeredAt ?? null,
  });
}

/**
 * Answers or cancels a question exactly once (conditional update on `status='pending'`). Secret
 * answers go to the secret store; the record keeps "stored". A run suspended on the question
 * gets its tool result and resumes. The receipt (`resolutionId`) is recorded only on commit.
 */
export async function resolveQuestion(deps: TRunDeps, actor: TActor, input: TResolveInput): Promise<TResolveResult> {
  const row = await visibleQuestion(deps.db, actor, input.id);
  if (!canDecide(actor, row.userId)) throw refused("forbidden", { code: "roleCannot", params: { act: "answer" } });
  if (row.status !== "pending") throw await settledQuestionError(deps, row);
  if (row.responseId) {
    const run = await runAgentAndOwner(deps.db, row.responseId);
    if (run) assertProfileMaySteer(deps.host, run, actor.userId, "answer");
  }
  if (row.expiresAt.getTime() <= deps.now().getTime()) {
    await expirePending(deps, deps.host, { type: "question", id: row.id });
    throw await settledQuestionError(deps, { ...row, status: "expired" });
  }
  const cancel = "cancel" in input;
  let answers: TAnswers = {};
  if (!cancel) {
    const checked = checkAnswers(row.questions, input.answers);
    if (!checked.ok) throw new QuestionError("QUESTION_INVALID_ANSWER", { code: "answerInvalid", params: { key: checked.key, message: checked.message } });
    answers = checked.answers;
  }
  const resolutionId = !cancel && "resolutionId" in input ? input.resolutionId : undefined;
  let reservation: symbol | undefined;
  const outcome = await transact(deps, async (tx, emit, announce) => {
    const stored: TAnswers = {};
    const secretKeys: string[] = [];
    for (const [key, values] of Object.entries(answers)) {
      const q = row.questions.find((x) => key === x.questionId || key.startsWith(`${x.questionId}.`));
      if (q && isSecretKey(q, key)) {
        secretKeys.push(key);
        stored[key] = [STORED];
      } else stored[key] = values;
    }
    // The source's authority is re-checked with no await between it and the claim below.
    if (input.assertCurrent) {
      let current = false;
      try {
        current = input.assertCurrent();
      } catch {}
      if (!current) throw new QuestionError("QUESTION_REQUESTER_INACTIVE", "This input's source is no longer current; it was not used as an answer.");
    }
    // A source-bound question accepts answers only while its asker's source is current (same synchronous window).
    if (!cancel) assertQuestionSourceCurrent(row);
    // The claim comes first: concurrent submissions serialize on this row, so a loser learns that
    // the question is already terminal (not that the run moved on), and writes nothing else.
    const won = await settlePendingQuestion(tx, row.id, { status: cancel ? "cancelled" : "answered", answers: cancel ? null : stored, answeredBy: actor.userId, answeredVia: input.via, resolvedAt: deps.now() });
    if (!won) return null;
    // Waiters that see this answer before its receipt is recorded wait for the commit's outcome.
    if (resolutionId) reservation = deps.receipts.reserve(row.id);
    if (won.responseId && won.kind !== "gateway") {
      // Throwing rolls the claim back: the question stays pending.
      if ((await runStatus(tx, won.responseId)) !== "requires_action") throw new QuestionError("QUESTION_REQUESTER_INACTIVE", "The run that asked this question is no longer waiting for it.");
    }
    // Secret values go to the secret store only for the submission that won.
    const secretIds: Record<string, string> = {};
    for (const key of secretKeys) {
      secretIds[key] = await storeSecret(tx, deps.secretKey, { questionId: row.id, answerKey: key, userId: row.userId, value: answers[key]?.[0] ?? "" });
    }
    // The run's frame shows the question as its creator (the run's owner) knows it.
    const [record] = await toRecords(tx, [won], won.userId);
    const result: TSettledQuestion = cancel
      ? { status: "cancelled", by: actor.name, system: input.via === "system" }
      : { status: "answered", answers: stored, ...(Object.keys(secretIds).length ? { secretIds } : {}) };
    const events = won.responseId ? [{ type: "question.resolved", data: { question: record }, frame: true, actorUserId: actor.userId, transport: input.via }] : [];
    const claimed = await settleRunQuestion(deps, deps.host, tx, emit, won, result, events);
    announceQuestion(announce, won, cancel ? "cancelled" : "answered", resolutionId);
    return { stored, claimed };
  }).catch((error: unknown) => {
    // Not committed: the reservation closes without a receipt.
    if (reservation) deps.receipts.release(row.id, reservation);
    throw error;
  });
  if (!outcome) throw await settledQuestionError(deps, (await questionById(deps.db, row.id)) ?? row);
  // Committed: the receipt is recorded here (settling the reservation) and, through the bus, by
  // every process's listener (which records the same receipt again, harmlessly).
  if (resolutionId) deps.receipts.record(row.id, resolutionId);
  if (outcome.claimed) deps.host.startClaimed(outcome.claimed);
  return cancel ? { status: "cancelled" } : { status: "answered", answers: outcome.stored };
}
