import type { Db } from "../../../db/client";
import { recordAdminEvent } from "../../../db/repositories/audit";
import { lockActiveAdmins, markDeleted, markDisabled, markEnabled, markOffboarded, type TUserStatus, userForAdmin } from "../../../db/repositories/user-status";
import type { TAdminAction, TAdminWho } from "../../core/admin-trail";
import type { TErrorReason } from "../../core/error-reasons";
import { notFound, refused } from "../../core/errors";
import type { TDeps } from "../../host/deps";

/** What the user admin use cases need: they announce credential changes on the bus. */
export type TUserAdminDeps = Pick<TDeps, "db" | "bus" | "log" | "now">;

type TChange = "disable" | "enable" | "delete" | "offboard";

const RESULT: Record<TChange, TUserStatus> = { disable: "disabled", enable: "active", delete: "deleted", offboard: "disabled" };
const ACTION: Record<TChange, TAdminAction> = { disable: "user.disabled", enable: "user.enabled", delete: "user.deleted", offboard: "user.offboarded" };

/** Why a change does not apply to a user in this status, or null when it does. */
function refusalFor(change: TChange, name: string, status: TUserStatus): TErrorReason | null {
  if (status === "deleted") return { code: "userDeleted", params: { name, change } };
  // Offboarding a disabled user still ends what it holds (its keys, any session).
  if (change === "disable" && status === "disabled") return { code: "userStatusIs", params: { name, status: "disabled" } };
  if (change === "enable" && status === "active") return { code: "userStatusIs", params: { name, status: "active" } };
  return null;
}

/**
 * Disables, enables or deletes a user in one transaction with its audit row. Disabling ends the
 * user's console sessions; deleting also revokes its keys, removes its password and frees its
 * email. Either way every open connection of the user ends at once (the change is announced to
 * every replica). The last active admin can be neither disabled nor deleted.
 */
async function changeUserStatus(
  deps: TUserAdminDeps,
  who: TAdminWho,
  userId: string,
  change: TChange,
): Promise<{ userId: string; name: string; status: TUserStatus; sessionsEnded?: number; keysRevoked?: number }> {
  // `actor` null is the CLI, acting with the data directory's authority (recorded as no user, with its OS user).
  const actor = who.actor;
  if (actor && actor.role !== "admin") throw refused("forbidden", { code: "adminOnly", params: { act: `${change}Users` } });
  if (actor?.userId === userId) throw refused("conflict", { code: "ownAccount", params: { change } });
  const now = deps.now();
  const user = await deps.db.transaction(async (transaction) => {
    const tx = transaction as unknown as Db;
    const admins = await lockActiveAdmins(tx);
    const target = await userForAdmin(tx, userId);
    if (!target) throw notFound("user", userId);
    const refusal = refusalFor(change, target.name, target.status);
    if (refusal) throw refused("conflict", refusal);
    if (change !== "enable" && admins.includes(target.id) && admins.length <= 1) {
      throw refused("conflict", { code: "lastAdmin", params: { name: target.name } });
    }
    let ended: { sessionsEnded: number; keysRevoked: number } | null = null;
    if (change === "offboard") ended = await markOffboarded(tx, target.id, now);
    else {
      const apply = change === "disable" ? markDisabled : change === "enable" ? markEnabled : markDeleted;
      if (!(await apply(tx, target.id, now))) throw refused("conflict", { code: "userChanged", params: { name: target.name } });
    }
    if (change === "offboard" && !ended) throw refused("conflict", { code: "userChanged", params: { name: target.name } });
    await recordAdminEvent(tx, who, { action: ACTION[change], targetType: "user", targetId: target.id, detail: { name: target.name, role: target.role, ...(ended ?? {}) } });
    return { ...target, ended };
  });
  if (change !== "enable") deps.bus.publishCredentials({ userId: user.id });
  deps.log.info({ userId: user.id, change, by: actor?.userId ?? "cli" }, "user status changed");
  return { userId: user.id, name: user.name, status: RESULT[change], ...(user.ended ?? {}) };
}

/** Disables a user: its keys, console sessions and open connections stop working at once (reversible). */
export const disableUser = (deps: TUserAdminDeps, who: TAdminWho, userId: string) => changeUserStatus(deps, who, userId, "disable");

/** Enables a disabled user again: its keys work again; it signs in anew. */
export const enableUser = (deps: TUserAdminDeps, who: TAdminWho, userId: string) => changeUserStatus(deps, who, userId, "enable");

/**
 * Offboards a user (someone who left): disabled, every console session ended, every API key
 * revoked for good, its open connections closed; one admin-trail row (`user.offboarded`) with
 * what was ended. An enable later restores the account, not its keys.
 */
export const offboardUser = (deps: TUserAdminDeps, who: TAdminWho, userId: string) => changeUserStatus(deps, who, userId, "offboard");

/** Deletes a user for good: credentials removed, the row (id, name) kept for the history that names it. */
export const deleteUser = (deps: TUserAdminDeps, who: TAdminWho, userId: string) => changeUserStatus(deps, who, userId, "delete");
