import { readFileSync } from "node:fs";
import { z } from "zod";
import { DomainError } from "../core/errors";
import type { ROLES } from "../core/vocabulary";
import type { TAdminCommand } from "../services/console/admin-commands";
import { type TParsedCommand, USAGE, UsageError } from "./parse";

/** The command line plus what the CLI process read for it: the password from stdin, its OS user. */
export type TCommandRequest = { argv: readonly string[]; stdin?: string; osUser?: string | null };

const ZTime = z.iso.datetime({ offset: true });
function time(name: string, value: string): string {
  if (!ZTime.safeParse(value).success) throw new DomainError("invalid_request", `--${name} must be an ISO 8601 time with an offset, e.g. 2026-01-31T00:00:00Z.`);
  return value;
}

/**
 * The administrative command (server/services/console/admin-commands.ts) a parsed command line
 * names, with what the CLI read for it: the password from stdin for `--password-stdin`. A value
 * the command line cannot carry (no password on stdin, a time without an offset) is refused here,
 * named by its flag.
 */
export function adminCommandOf(parsed: TParsedCommand, stdin: string | undefined): TAdminCommand {
  const { command, args, values } = parsed;
  const str = (name: string) => values[name] as string | undefined;
  const target = args[0] as string;
  const role = str("role") as (typeof ROLES)[number] | undefined;
  switch (command) {
    case "user add": {
      const password = values["password-stdin"] ? stdin?.replace(/\r?\n$/, "") : str("password");
      if (values["password-stdin"] && !password) throw new DomainError("invalid_request", "--password-stdin read no password from stdin.");
      return { command, name: target, role, email: str("email"), password, ...(values["break-glass"] ? { breakGlass: true } : {}) };
    }
    case "user list":
      return { command };
    case "user rename":
      return { command, user: target, name: args[1] as string };
    case "user teams":
      return { command, user: target, teams: (values.team as string[] | undefined) ?? [] };
    case "user disable":
    case "user enable":
    case "user delete":
    case "user offboard":
      return { command, user: target };
    case "user set-role":
      return { command, user: target, role: role as (typeof ROLES)[number] };
    case "key create":
      return { command, user: target, name: str("name") };
    case "key list":
      return { command, user: str("user"), all: values.all === true };
    case "key revoke":
      return { command, keyId: target };
    case "grant list":
      return { command, all: values.all === true };
    case "grant revoke":
      return { command, grantId: target };
    case "policy simulate": {
      const days = str("days");
      if (days !== undefined && !(/^\d{1,3}$/.test(days) && Number(days) >= 1 && Number(days) <= 365)) throw new DomainError("invalid_request", "--days must be a whole number of days, 1 to 365.");
      let file: unknown;
      try {
        file = JSON.parse(readFileSync(target, "utf8"));
      } catch (error) {
        throw new DomainError("invalid_request", `Cannot read the candidate agents file ${target}: ${error instanceof Error ? error.message : String(error)}`);
      }
      return { command, file, days: days === undefined ? 14 : Number(days) };
    }
    case "export": {
      const session = str("session");
      const response = str("response");
      const from = str("from");
      const to = str("to");
      return { command, of: session ? { sessionId: session } : response ? { responseId: response } : { from: time("from", from as string), ...(to ? { to: time("to", to) } : {}) } };
    }
  }
  throw new UsageError(`Unknown command "${command}".`, USAGE);
}
