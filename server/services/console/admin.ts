import type { Db } from "../../../db/client";
import { recordAudit } from "../../../db/repositories/audit";
import { apiKeyById, revokeApiKey, setUserRole } from "../../../db/repositories/console-admin";
import { lockActiveAdmins, userForAdmin } from "../../../db/repositories/user-status";
import { createApiKey } from "../../auth/api-keys";
import type { TActor } from "../../core/actor";
import { DomainError, notFound } from "../../core/errors";
import type { TRole } from "../../core/vocabulary";
import type { TDeps } from "../../host/deps";

/**
 * Changes a user's role (admins only), with its audit row. An admin cannot change its own role, the
 * last active admin stays one, and a deleted user's role no longer changes. The user's open
 * connections end at once (4403) and reconnect with the new role.
 */
export async function changeRole(deps: TDeps, actor: TActor, input: { userId: string; role: TRole }): Promise<{ userId: string; role: TRole }> {
  if (actor.role !== "admin") throw new DomainError("forbidden", "Only an admin can change roles.");
  if (input.userId === actor.userId) throw new DomainError("conflict", "You cannot change your own role; ask another admin.");
  const user = await deps.db.transaction(async (transaction) => {
    const tx = transaction as unknown as Db;
    const admins = await lockActiveAdmins(tx);
    const target = await userForAdmin(tx, input.userId);
    if (!target) throw notFound("user", input.userId);
    if (target.status === "deleted") throw new DomainError("conflict", `${target.name} was deleted; its role no longer changes.`);
    if (admins.includes(target.id) && input.role !== "admin" && admins.length <= 1) throw new DomainError("conflict", "The last admin keeps the admin role.");
    if (target.role === input.role) return target;
    await setUserRole(tx, target.id, input.role);
    await recordAudit(tx, { actorUserId: actor.userId, action: "user.role_changed", targetType: "user", targetId: target.id, data: { from: target.role, to: input.role } });
    return target;
  });
  if (user.role !== input.role) deps.bus.publishCredentials({ userId: user.id });
  deps.log.info({ userId: user.id, from: user.role, to: input.role, by: actor.userId }, "role changed");
  return { userId: user.id, role: input.role };
}

/** Creates an API key (returned once): for oneself, or for anyone by an admin. Auditors are read-only. */
export async function createKeyFor(deps: TDeps, actor: TActor, input: { userId?: string; name: string }): Promise<{ id: string; apiKey: string; userId: string; name: string }> {
  if (actor.role === "auditor") throw new DomainError("forbidden", "Auditors are read-only and cannot create API keys.");
  const userId = input.userId ?? actor.userId;
  if (userId !== actor.userId && actor.role !== "admin") throw new DomainError("forbidden", "Only an admin can create API keys for another user.");
  const owner = await userForAdmin(deps.db, userId);
  if (!owner) throw notFound("user", userId);
  if (owner.status === "deleted") throw new DomainError("conflict", `${owner.name} was deleted; deleted users get no new API keys.`);
  const created = await createApiKey(deps.db, userId, input.name);
  deps.log.info({ keyId: created.id, userId, by: actor.userId }, "api key created");
  return { id: created.id, apiKey: created.apiKey, userId, name: input.name };
}

/** Revokes an API key: one's own, or anyone's by an admin. Others' keys look missing. */
export async function revokeKeyFor(deps: TDeps, actor: TActor, keyId: string): Promise<{ id: string; revoked: true }> {
  const key = await apiKeyById(deps.db, keyId);
  if (!key || (key.userId !== actor.userId && actor.role !== "admin" && actor.role !== "auditor")) throw notFound("API key", keyId);
  if (actor.role === "auditor") throw new DomainError("forbidden", "Auditors are read-only and cannot revoke API keys.");
  if (key.userId !== actor.userId && actor.role !== "admin") throw notFound("API key", keyId);
  await deps.db.transaction(async (transaction) => {
    const tx = transaction as unknown as Db;
    if (!(await revokeApiKey(tx, key.id, deps.now()))) throw new DomainError("conflict", "This API key is already revoked.");
    await recordAudit(tx, { actorUserId: actor.userId, action: "api_key.revoked", targetType: "api_key", targetId: key.id, data: { userId: key.userId } });
  });
  // Sockets and streams opened with this key end at once, on every replica.
  deps.bus.publishCredentials({ userId: key.userId });
  deps.log.info({ keyId: key.id, userId: key.userId, by: actor.userId }, "api key revoked");
  return { id: key.id, revoked: true };
}
