import type { Db } from "../../../db/client";
import { recordAdminEvent } from "../../../db/repositories/audit";
import { nameHolder, writeDisplayName } from "../../../db/repositories/display-names";
import { userForAdmin } from "../../../db/repositories/user-status";
import { checkedDisplayName, claimingName, nameTaken } from "../../auth/new-user";
import type { TAdminWho } from "../../core/admin-trail";
import { notFound, refused } from "../../core/errors";
import type { TUserAdminDeps } from "./user-status";

export type TRenameResult = { userId: string; name: string; email: string; previousName: string; renamed: boolean };

/**
 * Changes a user's display name: one's own (any role), or anyone's by an admin or the CLI. The
 * name is checked (server/core/display-name.ts) and must be free: another user who is not deleted
 * with the same name by `displayNameKey` is a 409, found first or hit at the unique index when a
 * concurrent rename or creation took the name a moment earlier; nothing is written then. The new
 * name, its key and the trail row (`user.renamed`: from, to) commit in one transaction. The same
 * name spelled the same is no change (no row). A deleted user's name no longer changes.
 * Connections and caches holding the user's old name hear of it (the credentials announcement).
 */
export async function renameUser(deps: TUserAdminDeps, who: TAdminWho, input: { userId: string; name: string }): Promise<TRenameResult> {
  const actor = who.actor;
  if (actor && actor.userId !== input.userId && actor.role !== "admin") throw refused("forbidden", { code: "adminOnly", params: { act: "renameUsers" } });
  const name = checkedDisplayName(input.name);
  const result = await claimingName(name, () =>
    deps.db.transaction(async (transaction): Promise<TRenameResult> => {
      const tx = transaction as unknown as Db;
      const target = await userForAdmin(tx, input.userId);
      if (!target) throw notFound("user", input.userId);
      if (target.status === "deleted") throw refused("conflict", { code: "userDeleted", params: { name: target.name, change: "rename" } });
      const same = { userId: target.id, name: target.name, email: target.email, previousName: target.name, renamed: false };
      if (target.name === name) return same;
      if (await nameHolder(tx, name, target.id)) throw nameTaken(name);
      if (!(await writeDisplayName(tx, target.id, name, deps.now()))) throw refused("conflict", { code: "userChanged", params: { name: target.name } });
      await recordAdminEvent(tx, who, { action: "user.renamed", targetType: "user", targetId: target.id, detail: { from: target.name, to: name, email: target.email } });
      return { ...same, name, renamed: true };
    }),
  );
  if (result.renamed) {
    deps.bus.publishCredentials({ userId: result.userId });
    deps.log.info({ userId: result.userId, by: actor?.userId ?? "cli" }, "user renamed");
  }
  return result;
}
