import { questionDeadline } from "../../db/repositories/question-records";
import { actorOf } from "../auth/users";
import type { TActor } from "../core/actor";
import { DomainError } from "../core/errors";
import type { TAuthorityServices } from "../host/authority-port";
import type { TDeps } from "../host/deps";
import type { Host } from "../host/host";
import { invokeResponse } from "./invoke-response";
import { cancelPendingInput, claimPendingInput } from "./questions/pending-input";
import { resolveQuestion } from "./questions/resolve-question";
import { waitAnswer } from "./questions/wait-answer";

/**
 * The services the host's authority capabilities use (server/host/authority.ts), each acting as
 * the run's owner through the ordinary path: a child run is a `/v1/responses` invocation, an
 * answer is a `question.resolve` with a receipt, a recovery is a `question.waitAnswer` with
 * `includeResolutionId`.
 */
export function createAuthorityServices(deps: TDeps & { host: Host }): TAuthorityServices {
  const owner = async (userId: string): Promise<TActor> => {
    const actor = await actorOf(deps.db, userId);
    if (!actor) throw new DomainError("forbidden", "The run's owner is disabled or deleted; it acts no more.");
    return actor;
  };
  return {
    spawnRun: async (ownerId, body, source) => {
      // A child run keeps its parent's source: ending that credential revokes both.
      const invoked = await invokeResponse(deps, await owner(ownerId), { agent: body.agent, input: body.input, metadata: body.metadata }, { via: "system", isSourceCurrent: () => true, credential: source });
      return { responseId: invoked.responseId, sessionId: invoked.sessionId };
    },
    resolveQuestion: async (ownerId, input) =>
      resolveQuestion(deps, await owner(ownerId), { id: input.id, answers: input.answers, resolutionId: input.resolutionId, via: "system", assertCurrent: input.assertCurrent }),
    claimPendingInput: async (ownerId, input) => claimPendingInput(deps, await owner(ownerId), input),
    cancelPendingInput: async (ownerId, input) => cancelPendingInput(deps, await owner(ownerId), input),
    waitAnswer: async (ownerId, params) => {
      // Bounded by the question's own deadline (the waiter's existing one), never a shorter timer.
      const expiresAt = await questionDeadline(deps.db, params.id);
      const left = expiresAt ? expiresAt.getTime() - Date.now() + 2000 : 1000;
      return waitAnswer(deps, await owner(ownerId), { id: params.id, timeoutMs: Math.min(params.timeoutMs, Math.max(1000, Math.min(600_000, left))), includeResolutionId: true });
    },
  };
}
