import { getResponse } from "../../db/repositories/responses";
import { type TActor, canDecide, canRead } from "../core/actor";
import { DomainError, notFound } from "../core/errors";
import type { TTransport } from "../core/vocabulary";
import { assertProfileMaySteer } from "../host/authority";
import type { TDeps } from "../host/deps";
import type { Host } from "../host/host";
import { answerSideQuestion } from "../host/side-questions";

/**
 * Asks the harness of a run a side question (plugin API 1.2): authorized like steering (who may
 * read the run and decide for it, and only its owner where the harness keeps steering in the
 * owner's profile), answered by the harness's side-question handler beside the run. Any status
 * may be asked, a finished run included: the question only reads the run. The question and the
 * answer are recorded in the run's trajectory (`side_question.answered`), never in its transcript.
 */
export async function askSideQuestion(
  deps: TDeps & { host: Host },
  actor: TActor,
  input: { responseId: string; question: string; via: TTransport; signal?: AbortSignal },
): Promise<{ id: string; responseId: string; question: string; answer: string }> {
  const row = await getResponse(deps.db, input.responseId);
  if (!row || !canRead(actor, row.userId)) throw notFound("response", input.responseId);
  if (!canDecide(actor, row.userId)) throw new DomainError("forbidden", "Your role cannot ask side questions: auditors only read.");
  assertProfileMaySteer(deps.host, row, actor.userId, "side_question");
  const agent = deps.agents.forRun(row.agent, row.agentPolicy);
  if (!agent) throw new DomainError("conflict", `The agent ${row.agent} is no longer configured; its runs answer no side questions.`);
  return answerSideQuestion(deps, deps.host.harnesses, row, agent, { question: input.question, askedBy: actor.userId, via: input.via, signal: input.signal });
}
