import type { Db } from "../../../db/client";
import { recordAdminEvent } from "../../../db/repositories/audit";
import { userForAdmin } from "../../../db/repositories/user-status";
import { lockUserRoleAndGroups, setUserRoleAndGroups } from "../../../db/repositories/users";
import type { TAdminWho } from "../../core/admin-trail";
import { DomainError, notFound, refused } from "../../core/errors";
import { sameList } from "../../core/lists";
import type { TUserAdminDeps } from "./user-status";

export type TTeamsResult = { userId: string; name: string; teams: string[]; previous: string[]; changed: boolean };

/** At most this many teams per person: a provider's groups claim is cut to the same bound (server/auth/sso-config.ts). */
const MAX_TEAMS = 1000;

/** The teams as given: trimmed, each 1–256 characters, without repeats, in the order given. */
function checkedTeams(teams: readonly string[]): string[] {
  const out = [...new Set(teams.map((t) => t.trim()))];
  const bad = out.find((t) => t.length === 0 || t.length > 256);
  if (bad !== undefined) throw new DomainError("invalid_request", `A team name is 1 to 256 characters; "${bad.slice(0, 40)}" is not.`);
  if (out.length > MAX_TEAMS) throw new DomainError("invalid_request", `A person is in at most ${MAX_TEAMS} teams.`);
  return out;
}

/**
 * Sets the teams of a person who signs in with a password (admins, or the CLI): what single
 * sign-on writes from the provider's groups at every sign-in (docs/sso.md#teams), so for a person
 * who signs in that way the provider's list replaces this one at the next sign-in. The teams and
 * the trail row (`user.teams_changed`: from, to) commit in one transaction; the same list is no
 * change (no row). The user's cached credentials are read again.
 */
export async function setUserTeams(deps: TUserAdminDeps, who: TAdminWho, input: { userId: string; teams: readonly string[] }): Promise<TTeamsResult> {
  const actor = who.actor;
  if (actor && actor.role !== "admin") throw refused("forbidden", { code: "adminOnly", params: { act: "setTeams" } });
  const teams = checkedTeams(input.teams);
  const result = await deps.db.transaction(async (transaction): Promise<TTeamsResult> => {
    const tx = transaction as unknown as Db;
    const target = await userForAdmin(tx, input.userId);
    if (!target) throw notFound("user", input.userId);
    if (target.status === "deleted") throw refused("conflict", { code: "userDeleted", params: { name: target.name, change: "teams" } });
    const locked = await lockUserRoleAndGroups(tx, target.id);
    const previous = locked?.groups ?? [];
    if (sameList(previous, teams)) return { userId: target.id, name: target.name, teams, previous, changed: false };
    await setUserRoleAndGroups(tx, target.id, target.role, teams);
    await recordAdminEvent(tx, who, { action: "user.teams_changed", targetType: "user", targetId: target.id, detail: { name: target.name, from: previous, to: teams } });
    return { userId: target.id, name: target.name, teams, previous, changed: true };
  });
  if (result.changed) {
    deps.bus.publishCredentials({ userId: result.userId });
    deps.log.info({ userId: result.userId, by: actor?.userId ?? "cli" }, "teams changed");
  }
  return result;
}
