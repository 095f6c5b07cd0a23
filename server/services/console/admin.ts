import type { Db } from "../../../db/client";
import { recordAdminEvent } from "../../../db/repositories/audit";
import { apiKeyById, revokeApiKey, setUserRole } from "../../../db/repositories/console-admin";
import { lockActiveAdmins, userForAdmin } from "../../../db/repositories/user-status";
import { createApiKey } from "../../auth/api-keys";
import type { TActor } from "../../core/actor";
import type { TAdminWho } from "../../core/admin-trail";
import { DomainError, notFound, refused } from "../../core/errors";
import type { TRole } from "../../core/vocabulary";
import type { TDeps } from "../../host/deps";

type TAdminDeps = Pick<TDeps, "db" | "bus" | "log" | "now">;

/**
 * Changes a user's role (admins, or the CLI), with its trail row. An admin cannot change its own
 * role, the last active admin stays one, and a deleted user's role no longer changes. The user's
 * open connections end at once (4403) and reconnect with the new role.
 */
export async function changeRole(deps: TAdminDeps, who: TAdminWho, input: { userId: string; role: TRole }): Promise<{ userId: string; name: string; role: TRole }> {
  const actor = who.actor;
  if (actor && actor.role !== "admin") throw refused("forbidden", { code: "adminOnly", params: { act: "changeRoles" } });
  if (actor && input.userId === actor.userId) throw refused("conflict", { code: "ownAccount", params: { change: "role" } });
  const user = await deps.db.transaction(async (transaction) => {
    const tx = transaction as unknown as Db;
    const admins = await lockActiveAdmins(tx);
    const target = await userForAdmin(tx, input.userId);
    if (!target) throw notFound("user", input.userId);
    if (target.status === "deleted") throw refused("conflict", { code: "userDeleted", params: { name: target.name, change: "role" } });
    if (admins.includes(target.id) && input.role !== "admin" && admins.length <= 1) throw refused("conflict", { code: "lastAdminRole" });
    if (target.role === input.role) return target;
    await setUserRole(tx, target.id, input.role);
    await recordAdminEvent(tx, who, { action: "user.role_changed", targetType: "user", targetId: target.id, detail: { name: target.name, from: target.role, to: input.role } });
    return target;
  });
  if (user.role !== input.role) deps.bus.publishCredentials({ userId: user.id });
  deps.log.info({ userId: user.id, from: user.role, to: input.role, by: actor?.userId ?? "cli" }, "role changed");
  return { userId: user.id, name: user.name, role: input.role };
}

/**
 * Creates an API key (returned once) with its trail row: for oneself, or for anyone by an admin
 * (or the CLI). Auditors are read-only; deleted users get no keys.
 */
export async function createKeyFor(
  deps: TAdminDeps,
  who: TAdminWho,
  input: { userId?: string; name: string },
): Promise<{ id: string; apiKey: string; userId: string; name: string }> {
  const actor: TActor | null = who.actor;
  if (actor?.role === "auditor") throw refused("forbidden", { code: "auditorReadOnly", params: { act: "createKeys" } });
  const userId = input.userId ?? actor?.userId;
  if (!userId) throw new DomainError("invalid_request", "Name the user the key is for.");
  if (actor && userId !== actor.userId && actor.role !== "admin") throw refused("forbidden", { code: "adminOnly", params: { act: "createKeysForOthers" } });
  const created = await deps.db.transaction(async (transaction) => {
    const tx = transaction as unknown as Db;
    const owner = await userForAdmin(tx, userId);
    if (!owner) throw notFound("user", userId);
    if (owner.status === "deleted") throw refused("conflict", { code: "userDeleted", params: { name: owner.name, change: "keys" } });
    const key = await createApiKey(tx, userId, input.name);
    await recordAdminEvent(tx, who, { action: "api_key.created", targetType: "api_key", targetId: key.id, detail: { userId, name: input.name } });
    return key;
  });
  deps.log.info({ keyId: created.id, userId, by: actor?.userId ?? "cli" }, "api key created");
  return { id: created.id, apiKey: created.apiKey, userId, name: input.name };
}

/** Revokes an API key: one's own, or anyone's by an admin (or the CLI). Others' keys look missing. */
export async function revokeKeyFor(deps: TAdminDeps, who: TAdminWho, keyId: string): Promise<{ id: string; revoked: true }> {
  const actor = who.actor;
  const key = await apiKeyById(deps.db, keyId);
  if (!key || (actor && key.userId !== actor.userId && actor.role !== "admin" && actor.role !== "auditor")) throw notFound("apiKey", keyId);
  if (actor?.role === "auditor") throw refused("forbidden", { code: "auditorReadOnly", params: { act: "revokeKeys" } });
  if (actor && key.userId !== actor.userId && actor.role !== "admin") throw notFound("apiKey", keyId);
  await deps.db.transaction(async (transaction) => {
    const tx = transaction as unknown as Db;
    if (!(await revokeApiKey(tx, key.id, deps.now()))) throw refused("conflict", { code: "keyRevoked" });
    await recordAdminEvent(tx, who, { action: "api_key.revoked", targetType: "api_key", targetId: key.id, detail: { userId: key.userId } });
  });
  // Sockets and streams opened with this key end at once, on every replica.
  deps.bus.publishCredentials({ userId: key.userId });
  deps.log.info({ keyId: key.id, userId: key.userId, by: actor?.userId ?? "cli" }, "api key revoked");
  return { id: key.id, revoked: true };
}
