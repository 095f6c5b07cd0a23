import { z } from "zod";
import type { Db } from "../../../db/client";
import { userForAdmin } from "../../../db/repositories/user-status";
import type { TAuth } from "../../auth/auth";
import { addUser, findUser } from "../../auth/users";
import type { TActor } from "../../core/actor";
import type { TAdminWho } from "../../core/admin-trail";
import { DomainError, refused } from "../../core/errors";
import { readScope } from "../../core/read-scope";
import { ROLES } from "../../core/vocabulary";
import { listGrants, revokeGrant } from "../grants";
import { simulatePolicy, ZSimulationInput } from "../policy-simulation";
import { apiKeysVisible, trajectoryExport, workspaceUsers } from "../read/console";
import { trajectoryLine } from "../read/trajectory-line";
import { changeRole, createKeyFor, revokeKeyFor } from "./admin";
import { renameUser } from "./user-rename";
import { setUserTeams } from "./user-teams";
import { deleteUser, disableUser, enableUser, offboardUser, type TUserAdminDeps } from "./user-status";

/*
 * The administrative commands of a data directory's owner: users, keys, grants, export. The CLI
 * runs them (server/cli), in its own process or through the running server's control socket
 * (server/api/http/control.ts); both call this one service with a command already parsed.
 */

/** A user named by id, email or exact name. */
const ZUserRef = z.string().min(1).max(1000);
const ZRole = z.enum(ROLES);
const ZTime = z.iso.datetime({ offset: true });
const ZText = z.string().max(1000);

/** One command, as the CLI parsed it from its command line. */
export const ZAdminCommand = z.discriminatedUnion("command", [
  z.strictObject({ command: z.literal("user add"), name: ZText, role: ZRole.optional(), email: ZText.optional(), password: z.string().max(10_000).optional(), breakGlass: z.literal(true).optional() }),
  z.strictObject({ command: z.literal("user list") }),
  z.strictObject({ command: z.literal("user rename"), user: ZUserRef, name: ZText }),
  z.strictObject({ command: z.literal("user teams"), user: ZUserRef, teams: z.array(ZText).max(1000) }),
  z.strictObject({ command: z.literal("user disable"), user: ZUserRef }),
  z.strictObject({ command: z.literal("user enable"), user: ZUserRef }),
  z.strictObject({ command: z.literal("user delete"), user: ZUserRef }),
  z.strictObject({ command: z.literal("user offboard"), user: ZUserRef }),
  z.strictObject({ command: z.literal("user set-role"), user: ZUserRef, role: ZRole }),
  z.strictObject({ command: z.literal("key create"), user: ZUserRef, name: ZText.optional() }),
  z.strictObject({ command: z.literal("key list"), user: ZUserRef.optional(), all: z.boolean().optional() }),
  z.strictObject({ command: z.literal("key revoke"), keyId: ZText }),
  z.strictObject({ command: z.literal("grant list"), all: z.boolean().optional() }),
  z.strictObject({ command: z.literal("grant revoke"), grantId: ZText }),
  ZSimulationInput.extend({ command: z.literal("policy simulate") }),
  z.strictObject({
    command: z.literal("export"),
    of: z.union([z.strictObject({ sessionId: ZText }), z.strictObject({ responseId: ZText }), z.strictObject({ from: ZTime, to: ZTime.optional() })]),
  }),
]);
export type TAdminCommand = z.infer<typeof ZAdminCommand>;

/** What the commands run with: the database, the bus (credential changes reach open connections) and auth (passwords). */
export type TAdminCommandDeps = TUserAdminDeps & { auth: TAuth; config?: { environment: Readonly<Record<string, string | undefined>> } };

/** A result object, or JSONL lines (export). */
export type TAdminCommandOutput = { kind: "result"; result: Record<string, unknown> } | { kind: "lines"; lines: AsyncIterable<string> };

async function userRef(db: Db, ref: string): Promise<{ id: string; name: string }> {
  const user = await findUser(db, ref);
  if (!user) throw new DomainError("not_found", `No single user matches ${ref}.`);
  return user;
}

/** The commands read with the data directory's authority: every object, like an auditor (they decide nothing through reads). */
const OWNER_READER: TActor = { userId: "cli", role: "auditor", name: "cli" };

/**
 * Runs one command. It acts with the data directory's authority: trail rows name no user but
 * `who`'s channel (`cli`) and OS user.
 */
export async function runAdminCommand(deps: TAdminCommandDeps, who: TAdminWho, command: TAdminCommand): Promise<TAdminCommandOutput> {
  const result = (r: Record<string, unknown>): TAdminCommandOutput => ({ kind: "result", result: r });
  switch (command.command) {
    case "user add": {
      const created = await addUser(deps.db, deps.auth, { name: command.name, role: command.role ?? "member", email: command.email, password: command.password, breakGlass: command.breakGlass }, who);
      return result({ userId: created.userId, apiKey: created.apiKey, email: created.email });
    }
    case "user list":
      return result({ users: await workspaceUsers(deps) });
    case "user rename":
      return result({ ...(await renameUser(deps, who, { userId: (await userRef(deps.db, command.user)).id, name: command.name })) });
    case "user teams":
      return result({ ...(await setUserTeams(deps, who, { userId: (await userRef(deps.db, command.user)).id, teams: command.teams })) });
    case "user disable":
      return result(await disableUser(deps, who, (await userRef(deps.db, command.user)).id));
    case "user enable":
      return result(await enableUser(deps, who, (await userRef(deps.db, command.user)).id));
    case "user delete":
      return result(await deleteUser(deps, who, (await userRef(deps.db, command.user)).id));
    case "user offboard":
      return result(await offboardUser(deps, who, (await userRef(deps.db, command.user)).id));
    case "user set-role":
      return result(await changeRole(deps, who, { userId: (await userRef(deps.db, command.user)).id, role: command.role }));
    case "key create": {
      const user = await userRef(deps.db, command.user);
      if ((await userForAdmin(deps.db, user.id))?.status === "deleted") throw refused("conflict", { code: "userDeleted", params: { name: user.name, change: "keys" } });
      const key = await createKeyFor(deps, who, { userId: user.id, name: command.name ?? "cli" });
      return result({ userId: key.userId, keyId: key.id, apiKey: key.apiKey });
    }
    case "key list": {
      const owner = command.user ? await userRef(deps.db, command.user) : null;
      const keys = (await apiKeysVisible(deps, readScope(OWNER_READER))).filter((k) => (!owner || k.userId === owner.id) && (command.all || !k.revokedAt));
      return result({ keys });
    }
    case "key revoke":
      return result(await revokeKeyFor(deps, who, command.keyId));
    case "grant list":
      return result({ grants: await listGrants(deps, null, { status: command.all ? "all" : "active" }) });
    case "grant revoke":
      return result(await revokeGrant(deps, who, command.grantId));
    case "policy simulate": {
      const { totals, rows, dangerous, ...period } = await simulatePolicy(deps, who, { file: command.file, days: command.days });
      return result({ ...period, ...totals, rows, dangerous });
    }
    case "export": {
      const { of } = command;
      const selection = "from" in of ? { range: { from: new Date(of.from), to: of.to ? new Date(of.to) : deps.now() } } : of;
      const batches = await trajectoryExport(deps, readScope(OWNER_READER), selection, {}, 250, new AbortController().signal);
      return { kind: "lines", lines: jsonl(batches) };
    }
  }
}

/** The JSONL lines of the export: the console's download format (server/api/http/export.ts). */
async function* jsonl(batches: AsyncIterable<Parameters<typeof trajectoryLine>[0][]>): AsyncGenerator<string> {
  for await (const rows of batches) for (const row of rows) yield trajectoryLine(row);
}
