import { z } from "zod";
import type { Db } from "../../db/client";
import { createApiKey } from "../auth/api-keys";
import type { TAuth } from "../auth/auth";
import { addUser, findUser } from "../auth/users";
import { DomainError } from "../core/errors";
import { ROLES } from "../core/vocabulary";

export const USAGE = `Usage:
  npm run cli -- user add NAME --role ROLE [--email EMAIL] [--password PASSWORD] [--json]
  npm run cli -- key create USER [--name NAME] [--json]     (USER: id, email or exact name)
Roles: ${ROLES.join(", ")}`;

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

/** Runs one CLI command against a database; the same code runs in the CLI or inside the server. */
export async function runCommand(deps: { db: Db; auth: TAuth }, argv: readonly string[]): Promise<Record<string, unknown>> {
  const { positionals, flags } = parseArgs(argv);
  const [noun, verb, target] = positionals;
  if (noun === "user" && verb === "add" && target) {
    const role = z.enum(ROLES).safeParse(flag(flags, "role") ?? "member");
    if (!role.success) throw new DomainError("invalid_request", `--role must be one of ${ROLES.join(", ")}.`);
    const created = await addUser(deps.db, deps.auth, { name: target, role: role.data, email: flag(flags, "email"), password: flag(flags, "password") });
    return { userId: created.userId, apiKey: created.apiKey, email: created.email };
  }
  if (noun === "key" && verb === "create" && target) {
    const user = await findUser(deps.db, target);
    if (!user) throw new DomainError("not_found", `No single user matches ${target}.`);
    const key = await createApiKey(deps.db, user.id, flag(flags, "name") ?? "cli");
    return { userId: user.id, apiKey: key.apiKey };
  }
  throw new DomainError("invalid_request", USAGE);
}
