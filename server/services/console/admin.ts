import { apiKeyById, countAdmins, revokeApiKey, setUserRole, userById } from "../../../db/repositories/console-admin";
import { createApiKey } from "../../auth/api-keys";
import type { TActor } from "../../core/actor";
import { DomainError, notFound } from "../../core/errors";
import type { TRole } from "../../core/vocabulary";
import type { TDeps } from "../../host/deps";

/** Changes a user's role (admins only). An admin cannot change its own role, and the last admin stays one. */
export async function changeRole(deps: TDeps, actor: TActor, input: { userId: string; role: TRole }): Promise<{ userId: string; role: TRole }> {
  if (actor.role !== "admin") throw new DomainError("forbidden", "Only an admin can change roles.");
  const user = await userById(deps.db, input.userId);
  if (!user) throw notFound("user", input.userId);
  if (user.id === actor.userId) throw new DomainError("conflict", "You cannot change your own role; ask another admin.");
  if (user.role === "admin" && input.role !== "admin" && (await countAdmins(deps.db)) <= 1) throw new DomainError("conflict", "The last admin keeps the admin role.");
  await setUserRole(deps.db, user.id, input.role);
  deps.log.info({ userId: user.id, from: user.role, to: input.role, by: actor.userId }, "role changed");
  return { userId: user.id, role: input.role };
}

/** Creates an API key (returned once): for oneself, or for anyone by an admin. Auditors are read-only. */
export async function createKeyFor(deps: TDeps, actor: TActor, input: { userId?: string; name: string }): Promise<{ id: string; apiKey: string; userId: string; name: string }> {
  if (actor.role === "auditor") throw new DomainError("forbidden", "Auditors are read-only and cannot create API keys.");
  const userId = input.userId ?? actor.userId;
  if (userId !== actor.userId && actor.role !== "admin") throw new DomainError("forbidden", "Only an admin can create API keys for another user.");
  if (!(await userById(deps.db, userId))) throw notFound("user", userId);
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
  if (!(await revokeApiKey(deps.db, key.id, deps.now()))) throw new DomainError("conflict", "This API key is already revoked.");
  deps.log.info({ keyId: key.id, userId: key.userId, by: actor.userId }, "api key revoked");
  return { id: key.id, revoked: true };
}
