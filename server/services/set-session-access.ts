import type { Db } from "../../db/client";
import { recordAdminEvent } from "../../db/repositories/audit";
import { ACCESS_GRANTED, ACCESS_REVOKED, lockSessionForAccessChange, writeSessionAccess } from "../../db/repositories/session-access";
import type { TActor } from "../core/actor";
import { canRead } from "../core/actor";
import type { TAdminOrigin } from "../core/admin-trail";
import { notFound, refused } from "../core/errors";
import { accessChangeRefusal, type TSessionAccess } from "../core/session-access";
import type { TDeps } from "../host/deps";

/**
 * Sets a session's access under `accessChangeRefusal`. A change and its audit row (who, from,
 * to) commit together; setting the access it already has changes and records nothing.
 */
export async function setSessionAccess(deps: TDeps, actor: TActor, origin: TAdminOrigin, input: { sessionId: string; access: TSessionAccess }): Promise<{ sessionId: string; access: TSessionAccess }> {
  return deps.db.transaction(async (transaction) => {
    const tx = transaction as unknown as Db;
    // Locked, so two concurrent changes are recorded in the order they took effect.
    const session = await lockSessionForAccessChange(tx, input.sessionId);
    if (!session || !canRead(actor, session.userId)) throw notFound("session", input.sessionId);
    const refusal = accessChangeRefusal(actor, session.userId, input.access);
    if (refusal) throw refused("forbidden", refusal);
    if (session.access === input.access) return { sessionId: session.id, access: input.access };
    await writeSessionAccess(tx, session.id, input.access);
    await recordAdminEvent(tx, { actor, origin }, {
      action: input.access === "full" ? ACCESS_GRANTED : ACCESS_REVOKED,
      targetType: "session",
      targetId: session.id,
      detail: { from: session.access, to: input.access, ownerUserId: session.userId, actorRole: actor.role },
    });
    deps.log.info({ sessionId: session.id, access: input.access, by: actor.userId }, "session access changed");
    return { sessionId: session.id, access: input.access };
  });
}
