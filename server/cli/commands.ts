import { z } from "zod";
import type { Db } from "../../db/client";
import { userForAdmin } from "../../db/repositories/user-status";
import { createApiKey } from "../auth/api-keys";
import type { TAuth } from "../auth/auth";
import { addUser, findUser } from "../auth/users";
import { DomainError } from "../core/errors";
import { ROLES } from "../core/vocabulary";
import { deleteUser, disableUser, enableUser, type TUserAdminDeps } from "../services/console/user-status";

export const USAGE = `Usage:
  npm run cli -- user add NAME --role ROLE [--email EMAIL] [--password PASSWORD] [--json]
  npm run cli -- user disable USER [--json]   (keys, console sessions and open connections stop at once)
  npm run cli -- user enable USER [--json]
  npm run cli -- user delete USER [--json]    (credentials removed for good; the history keeps the name)
  npm run cli -- key create USER [--name NAME] [--json]
USER: id, email or exact name. Roles: ${ROLES.join(", ")}`;

/** Splits argv into positionals and `--flag value` options (`--json` is a bare flag). */
export function parseArgs(argv: readonly string[]): { positionals: string[]; flags: Record<string, string | true> } {
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith("--")) {
      positionals.push(arg);
      continue;
    }
    const name = arg.slice(2);
    const value = argv[i + 1];
    if (name === "json" || value === undefined || value.startsWith("--")) flags[name] = true;
    else {
      flags[name] = value;
      i++;
    }
  }
  return { positionals, flags };
}

const flag = (flags: Record<string, string | true>, name: string): string | undefined => {
  const v = flags[name];
  if (v === true) throw new DomainError("invalid_request", `--${name} needs a value.`);
  return v;
};

/** The options each command takes; anything else is an error, never silently ignored. */
const OPTIONS: Record<string, readonly string[]> = {
  "user add": ["role", "email", "password", "json"],
  "user disable": ["json"],
  "user enable": ["json"],
  "user delete": ["json"],
  "key create": ["name", "json"],
};

/**
 * The command named by argv with its one target, or a clear error (unknown command, option, or
 * extra argument). Checked before anything is opened, so a typo costs nothing and changes nothing.
 */
export function parseCommand(argv: readonly string[]): { command: string; target: string; flags: Record<string, string | true> } {
  const { positionals, flags } = parseArgs(argv);
  const [noun, verb, target, ...extra] = positionals;
  const command = `${noun} ${verb}`;
  const allowed = OPTIONS[command];
  if (!allowed) throw new DomainError("invalid_request", `Unknown command "${positionals.slice(0, 2).join(" ")}".\n${USAGE}`);
  if (!target) throw new DomainError("invalid_request", `${command} needs a ${noun === "user" && verb === "add" ? "NAME" : "USER"}.\n${USAGE}`);
  if (extra.length > 0) throw new DomainError("invalid_request", `Unexpected argument "${extra[0]}" for ${command}.`);
  const unknown = Object.keys(flags).find((name) => !allowed.includes(name));
  if (unknown !== undefined) throw new DomainError("invalid_request", `Unknown option --${unknown} for ${command}; it takes ${allowed.map((o) => `--${o}`).join(", ")}.`);
  return { command, target, flags };
}

async function userRef(db: Db, ref: string): Promise<{ id: string; name: string }> {
  const user = await findUser(db, ref);
  if (!user) throw new DomainError("not_found", `No single user matches ${ref}.`);
  return user;
}

/**
 * Runs one CLI command against a database; the same code runs in the CLI or inside the server.
 * It acts with the data directory's authority: audit rows name no user.
 */
export async function runCommand(deps: TUserAdminDeps & { auth: TAuth }, argv: readonly string[]): Promise<Record<string, unknown>> {
  const { command, target, flags } = parseCommand(argv);
  if (command === "user add") {
    const role = z.enum(ROLES).safeParse(flag(flags, "role") ?? "member");
    if (!role.success) throw new DomainError("invalid_request", `--role must be one of ${ROLES.join(", ")}.`);
    const created = await addUser(deps.db, deps.auth, { name: target, role: role.data, email: flag(flags, "email"), password: flag(flags, "password") });
    return { userId: created.userId, apiKey: created.apiKey, email: created.email };
  }
  const user = await userRef(deps.db, target);
  if (command === "user disable") return disableUser(deps, null, user.id);
  if (command === "user enable") return enableUser(deps, null, user.id);
  if (command === "user delete") return deleteUser(deps, null, user.id);
  if ((await userForAdmin(deps.db, user.id))?.status === "deleted") throw new DomainError("conflict", `${user.name} was deleted; deleted users get no new API keys.`);
  const key = await createApiKey(deps.db, user.id, flag(flags, "name") ?? "cli");
  return { userId: user.id, apiKey: key.apiKey };
}
