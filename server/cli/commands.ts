import { z } from "zod";
import type { Db } from "../../db/client";
import { userForAdmin } from "../../db/repositories/user-status";
import type { TAuth } from "../auth/auth";
import { addUser, findUser } from "../auth/users";
import type { TActor } from "../core/actor";
import { CLI_ORIGIN, type TAdminWho } from "../core/admin-trail";
import { DomainError, refused } from "../core/errors";
import { readScope } from "../core/read-scope";
import type { ROLES } from "../core/vocabulary";
import { parseCommand, USAGE, UsageError } from "./parse";

export { parseCommand, USAGE, UsageError };
import { changeRole, createKeyFor, revokeKeyFor } from "../services/console/admin";
import { renameUser } from "../services/console/user-rename";
import { deleteUser, disableUser, enableUser, type TUserAdminDeps } from "../services/console/user-status";
import { listGrants, revokeGrant } from "../services/grants";
import { apiKeysVisible, trajectoryExport, workspaceUsers } from "../services/read/console";
import { trajectoryLine as exportLine } from "../services/read/trajectory-line";

/** What the CLI (or the server, for the CLI) runs a command with. `database`: which one, as printed. */
export type TCommandDeps = TUserAdminDeps & { auth: TAuth; database: string };

/** The command line plus what the CLI process read for it: the password from stdin, its OS user. */
export type TCommandRequest = { argv: readonly string[]; stdin?: string; osUser?: string | null };

/** A result object, or JSONL lines (export). */
export type TCommandOutput = { kind: "result"; result: Record<string, unknown> } | { kind: "lines"; lines: AsyncIterable<string> };

async function userRef(db: Db, ref: string): Promise<{ id: string; name: string }> {
  const user = await findUser(db, ref);
  if (!user) throw new DomainError("not_found", `No single user matches ${ref}.`);
  return user;
}

/** The CLI reads with the data directory's authority: every object, like an auditor (it decides nothing through reads). */
const CLI_READER: TActor = { userId: "cli", role: "auditor", name: "cli" };

const ZTime = z.iso.datetime({ offset: true });
function time(name: string, value: string): Date {
  if (!ZTime.safeParse(value).success) throw new DomainError("invalid_request", `--${name} must be an ISO 8601 time with an offset, e.g. 2026-01-31T00:00:00Z.`);
  return new Date(value);
}

/**
 * Runs one CLI command against a database; the same code runs in the CLI or inside the server
 * (through its control socket). It acts with the data directory's authority: trail rows name no
 * user but the channel `cli` and the OS user.
 */
export async function runCommand(deps: TCommandDeps, request: TCommandRequest): Promise<TCommandOutput> {
  const parsed = parseCommand(request.argv);
  if ("help" in parsed) return { kind: "result", result: { usage: parsed.help } };
  const { command, args, values } = parsed;
  const who: TAdminWho = { actor: null, origin: CLI_ORIGIN(request.osUser ?? null) };
  const str = (name: string) => values[name] as string | undefined;
  const result = (r: Record<string, unknown>): TCommandOutput => ({ kind: "result", result: r });
  const target = args[0] as string;
  switch (command) {
    case "user add": {
      const password = values["password-stdin"] ? request.stdin?.replace(/\r?\n$/, "") : str("password");
      if (values["password-stdin"] && !password) throw new DomainError("invalid_request", "--password-stdin read no password from stdin.");
      const created = await addUser(deps.db, deps.auth, { name: target, role: (str("role") ?? "member") as (typeof ROLES)[number], email: str("email"), password }, who);
      return result({ userId: created.userId, apiKey: created.apiKey, email: created.email });
    }
    case "user list":
      return result({ users: await workspaceUsers(deps) });
    case "user rename":
      return result({ ...(await renameUser(deps, who, { userId: (await userRef(deps.db, target)).id, name: args[1] as string })) });
    case "user disable":
      return result(await disableUser(deps, who, (await userRef(deps.db, target)).id));
    case "user enable":
      return result(await enableUser(deps, who, (await userRef(deps.db, target)).id));
    case "user delete":
      return result(await deleteUser(deps, who, (await userRef(deps.db, target)).id));
    case "user set-role":
      return result(await changeRole(deps, who, { userId: (await userRef(deps.db, target)).id, role: str("role") as (typeof ROLES)[number] }));
    case "key create": {
      const user = await userRef(deps.db, target);
      if ((await userForAdmin(deps.db, user.id))?.status === "deleted") throw refused("conflict", { code: "userDeleted", params: { name: user.name, change: "keys" } });
      const key = await createKeyFor(deps, who, { userId: user.id, name: str("name") ?? "cli" });
      return result({ userId: key.userId, keyId: key.id, apiKey: key.apiKey });
    }
    case "key list": {
      const owner = str("user") ? await userRef(deps.db, str("user") as string) : null;
      const keys = (await apiKeysVisible(deps, readScope(CLI_READER))).filter((k) => (!owner || k.userId === owner.id) && (values.all || !k.revokedAt));
      return result({ keys });
    }
    case "key revoke":
      return result(await revokeKeyFor(deps, who, target));
    case "grant list":
      return result({ grants: await listGrants(deps, null, { status: values.all ? "all" : "active" }) });
    case "grant revoke":
      return result(await revokeGrant(deps, who, target));
    case "export": {
      const of = str("session")
        ? { sessionId: str("session") as string }
        : str("response")
          ? { responseId: str("response") as string }
          : { range: { from: time("from", str("from") as string), to: str("to") ? time("to", str("to") as string) : deps.now() } };
      const batches = await trajectoryExport(deps, readScope(CLI_READER), of, {}, 250, new AbortController().signal);
      return { kind: "lines", lines: jsonl(batches) };
    }
  }
  throw new UsageError(`Unknown command "${command}".`, USAGE);
}

/** The JSONL lines of the export: the console's download format (server/api/http/export.ts). */
async function* jsonl(batches: AsyncIterable<Parameters<typeof exportLine>[0][]>): AsyncGenerator<string> {
  for await (const rows of batches) for (const row of rows) yield exportLine(row);
}
