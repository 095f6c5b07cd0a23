import { questionById } from "../../../db/repositories/question-records";
import type { TActor } from "../../core/actor";
import { QuestionError } from "../../core/questions/errors";
import type { TPendingInputTarget } from "../../host/authority-port";
import type { TRunDeps } from "../../host/deps";
import { resolveQuestion } from "./resolve-question";
import { pendingRunQuestion, textAnswers } from "./route-text-answer";

/** The run's question a claim targets: the named one (if it is this run's), else the pending one of its session. */
async function targetQuestion(deps: TRunDeps, target: TPendingInputTarget) {
  const row = target.questionId ? await questionById(deps.db, target.questionId) : await pendingRunQuestion(deps, target.sessionId);
  return row && row.responseId === target.responseId ? row : null;
}

/**
 * Answers the question a run waits on with a text, as its owner (the seed's V2
 * `claimPendingUserInputAnswer`): the same text rule as plain text typed into the session, and
 * `question.resolve` with a receipt. Null when the run waits on no such question.
 */
export async function claimPendingInput(deps: TRunDeps, owner: TActor, target: TPendingInputTarget & { text: string; resolutionId: string }): Promise<{ questionId: string } | null> {
  const row = await targetQuestion(deps, target);
  if (!row) return null;
  const answers = textAnswers(row, target.text);
  if (!answers.ok) throw new QuestionError("QUESTION_INVALID_ANSWER", `The text was not used as an answer: ${answers.why}`);
  await resolveQuestion(deps, owner, { id: row.id, answers: answers.answers, resolutionId: target.resolutionId, via: "system", assertCurrent: target.assertCurrent });
  return { questionId: row.id };
}

/** Cancels the question a run waits on, as its owner, recorded as resolved by `resolvedBy` (the seed's V2 `cancelPendingUserInput`). */
export async function cancelPendingInput(deps: TRunDeps, owner: TActor, target: TPendingInputTarget & { resolvedBy: string }): Promise<{ questionId: string } | null> {
  const row = await targetQuestion(deps, target);
  if (!row) return null;
  await resolveQuestion(deps, owner, { id: row.id, cancel: true, resolvedBy: target.resolvedBy, via: "system", assertCurrent: target.assertCurrent });
  return { questionId: row.id };
}
