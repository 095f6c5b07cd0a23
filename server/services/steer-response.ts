import { getResponse } from "../../db/repositories/responses";
import { type TActor, canDecide, canRead } from "../core/actor";
import { DomainError, notFound, refused } from "../core/errors";
import type { TAssertCurrent, TInjectionAuthorityKind } from "../core/runtime";
import { isTerminal, type TTransport } from "../core/vocabulary";
import type { TDeps } from "../host/deps";
import type { Host } from "../host/host";
import { assertProfileMaySteer } from "../host/authority";

/**
 * Steers a message into a running (or suspended) response. The message is queued under the
 * sender's authority (`run`, or `source-bound` when its source's lifetime also constrains
 * dispatch) and used at the run's next model turn, after its authority is checked once more.
 */
export async function steerResponse(
  deps: TDeps & { host: Host },
  actor: TActor,
  input: { responseId: string; text: string; via: TTransport; authorityKind: TInjectionAuthorityKind; assertCurrent: TAssertCurrent },
): Promise<{ id: string; responseId: string; status: "queued"; sequence: number }> {
  const row = await getResponse(deps.db, input.responseId);
  if (!row || !canRead(actor, row.userId)) throw notFound("response", input.responseId);
  if (!canDecide(actor, row.userId)) throw refused("forbidden", { code: "roleCannot", params: { act: "steer" } });
  if (isTerminal(row.status)) throw refused("conflict", { code: "responseClosed", params: { status: row.status, act: "steer" } });
  assertProfileMaySteer(deps.host, row, actor.userId, "steer");
  const queued = await deps.host.steering.queue({
    responseId: row.id,
    sessionId: row.sessionId,
    userId: actor.userId,
    text: input.text,
    via: input.via,
    authorityKind: input.authorityKind,
    assertCurrent: input.assertCurrent,
  });
  if ("refused" in queued) throw new DomainError("conflict", `The message was not queued: ${queued.refused}`);
  return { id: queued.id, responseId: row.id, status: "queued", sequence: queued.sequence };
}
