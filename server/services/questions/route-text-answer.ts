import { pendingRunQuestionOfSession, questionById } from "../../../db/repositories/question-records";
import { runStatusAndNextFrame } from "../../../db/repositories/question-runs";
import type { TActor } from "../../core/actor";
import { QuestionError } from "../../core/questions/errors";
import type { TAnswers, TQuestion } from "../../core/questions/schema";
import type { TTransport } from "../../core/vocabulary";
import type { TDeps, TRunDeps } from "../../host/deps";
import { resolveQuestion, settledQuestionError } from "./resolve-question";

/** The pending run-created question of a session, if any (plain text in the session goes to it). */
export function pendingRunQuestion(deps: TDeps, sessionId: string) {
  return pendingRunQuestionOfSession(deps.db, sessionId);
}

/**
 * A text as the answers of a question that takes a text reply: one free-text question (or one
 * whose options allow "other"), not a secret, a form or a URL.
 */
export function textAnswers(row: { id: string; questions: readonly TQuestion[] }, text: string): { ok: true; answers: TAnswers } | { ok: false; why: string } {
  const [question] = row.questions;
  if (row.questions.length !== 1 || !question || question.isSecret || question.fields || question.url || (question.options.length > 0 && !question.isOther)) {
    return { ok: false, why: `answer "${question?.header ?? "the question"}" on its answer page (/answer/${row.id}); it needs more than a text reply.` };
  }
  return { ok: true, answers: { [question.questionId]: [text] } };
}

/**
 * Routes plain text typed into a session to the question pending there, under the question
 * creator's authority: the creator run must still be waiting, and the sender must be the
 * creator's user in the creator's session. The source (`isSourceCurrent`) and the creator are
 * re-checked synchronously right before the commit. A refusal is visible (409) and starts no
 * new turn; the question stays pending for later valid input.
 */
export async function routeTextAnswer(
  deps: TRunDeps,
  actor: TActor,
  input: { sessionId: string; text: string; via: TTransport; isSourceCurrent: () => boolean },
  /** The question the caller found pending (read once: a second read could miss it after a racing answer). */
  row: NonNullable<Awaited<ReturnType<typeof pendingRunQuestion>>>,
): Promise<{ responseId: string; sessionId: string; afterSequence: number; questionId: string }> {
  const creator = row.creator;
  const refuse = (why: string) => new QuestionError("QUESTION_REQUESTER_INACTIVE", `Your message was not used as an answer: ${why} No new agent turn was started.`);
  if (!creator.responseId || !creator.callId) throw refuse("this question accepts answers on its answer page only.");
  if (creator.userId !== actor.userId || creator.sessionId !== input.sessionId) throw refuse("only the person who started this run can answer it by message.");
  const answers = textAnswers(row, input.text);
  if (!answers.ok) throw refuse(answers.why);
  const run = await runStatusAndNextFrame(deps.db, creator.responseId);
  if (run?.status !== "requires_action") {
    // A racing answer that resumed the run: the loser hears that the question is settled, as when it
    // loses at the claim (the same 409 whichever way it lost).
    const now = await questionById(deps.db, row.id);
    if (now && now.status !== "pending") throw await settledQuestionError(deps, now);
    throw refuse("the run that asked is no longer waiting.");
  }
  await resolveQuestion(deps, actor, {
    id: row.id,
    answers: answers.answers,
    via: input.via,
    assertCurrent: input.isSourceCurrent,
  });
  return { responseId: creator.responseId, sessionId: input.sessionId, afterSequence: run.nextFrameSeq - 1, questionId: row.id };
}
