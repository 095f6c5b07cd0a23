import { steeringAuthorsOf } from "../../db/repositories/steering";
import type { TSubagentCapabilities, TSubagentSpawnOutcome } from "../../plugin-sdk/authority";
import type { TAuthorityAttempt, TAuthorityServices } from "./authority-port";
import { recordEvents } from "./transact";

/**
 * Native subagent spawn admission. The requester is verified, never reconstructed: the run's
 * owner (its `requesterProfile().id`) is the only identity a spawn may name. A spawn is refused
 * when it names no one or someone else, or when the run has more than one participant (someone
 * else steered it): who asked would be ambiguous, so the sender resends the request as a new
 * message of their own. An admitted child is a run of the requester through the ordinary
 * `/v1/responses` path; its envelope's `metadata.parentResponseId` and both trajectories link it
 * to its parent. Each spawn is a step: a resumed attempt gets the same verdict, never a second child.
 */
export function createSubagentCapabilities(attempt: TAuthorityAttempt, use: { gate: () => void; services: () => TAuthorityServices }): TSubagentCapabilities {
  const { deps, response } = attempt;
  let spawns = 0;
  return {
    requesterProfile: () => {
      use.gate();
      return { id: response.userId };
    },
    spawn: async (request) => {
      use.gate();
      const index = ++spawns;
      const outcome = await attempt.step(`subagent:${index}`, async (record): Promise<TSubagentSpawnOutcome> => {
        const refuse = (reason: string): TSubagentSpawnOutcome => {
          record.event("subagent.refused", { spawn: index, agent: typeof request?.agent === "string" ? request.agent : null, reason });
          return { status: "refused", reason };
        };
        if (!request || typeof request.agent !== "string" || request.agent === "") return refuse("A spawn names the agent the child runs.");
        if (typeof request.user !== "string" || request.user === "") {
          return refuse("The spawn names no requester. Name the verified requester's profile id (requesterProfile().id) as user.");
        }
        if (request.user !== response.userId) {
          return refuse(`The spawn names ${request.user}, which is not this run's verified requester; ambiguous identities are refused. Name requesterProfile().id as user.`);
        }
        if (!deps.agents.find(request.agent)) return refuse(`No agent named ${request.agent} is served here.`);
        // Everyone whose words are in this run: its owner, and whoever steered it.
        const steerers = await steeringAuthorsOf(deps.db, response.id);
        const others = steerers.filter((u) => u !== response.userId);
        if (others.length > 0) {
          return refuse("More than one person is in this run, so who asks for the subagent is ambiguous; the spawn is refused. Ask the sender to resend the request as a new message, so it runs as its own turn.");
        }
        // After every await of the preparation, right before the admission: the attempt and the harness's own guard.
        attempt.assertNotCancelled();
        use.gate();
        const guarded = request.guard?.();
        if (typeof guarded === "string" && guarded !== "") return refuse(guarded);
        const child = await use.services().spawnRun(response.userId, {
          agent: request.agent,
          input: request.input,
          metadata: { parentResponseId: response.id, parentSessionId: response.sessionId, spawnedBy: "subagent" },
        }, response.sourceCredential ?? null);
        record.event("subagent.spawned", { spawn: index, agent: request.agent, childResponseId: child.responseId, childSessionId: child.sessionId, requester: response.userId });
        await recordEvents(deps, child.responseId, [
          { type: "subagent.parent", data: { parentResponseId: response.id, parentSessionId: response.sessionId, requester: response.userId }, frame: false },
        ]);
        return { status: "admitted", responseId: child.responseId, sessionId: child.sessionId, parentResponseId: response.id };
      });
      // The verdict is part of the run's record now (a child exists): not only at the next commit.
      await attempt.commit();
      return outcome;
    },
  };
}
