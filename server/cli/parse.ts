import { type ParseArgsConfig, parseArgs } from "node:util";
import { ROLES } from "../core/vocabulary";

/*
 * The CLI's command line: every command, its usage, and the strict parsing. Light on purpose (no
 * database, no services): a bad command line is refused before anything heavy is loaded or opened.
 */

type TOptions = NonNullable<ParseArgsConfig["options"]>;

/** One CLI command: its positionals, its options (parsed strictly) and its usage line. */
type TSpec = { positionals: readonly string[]; options: TOptions; usage: string; help: string };

const JSON_FLAG = { json: { type: "boolean" } } as const;
const ROLE_LIST = ROLES.join(", ");

/** Every command; `npm run cli -- COMMAND --help` prints one, `npm run cli -- --help` all of them. */
export const COMMANDS: Record<string, TSpec> = {
  "user add": {
    positionals: ["NAME"],
    options: { role: { type: "string" }, email: { type: "string" }, password: { type: "string" }, "password-stdin": { type: "boolean" }, "break-glass": { type: "boolean" }, ...JSON_FLAG },
    usage: "user add NAME [--role ROLE] [--email EMAIL] [--password PASSWORD | --password-stdin] [--break-glass] [--json]",
    help: `adds a user (role member unless --role) with an API key, printed once; with a password it can sign in to the console (with --break-glass, even when COUNTERSIGN_PASSWORD_LOGIN=off). Roles: ${ROLE_LIST}`,
  },
  "user list": { positionals: [], options: { ...JSON_FLAG }, usage: "user list [--json]", help: "every user with its role, status and number of live keys" },
  "user rename": {
    positionals: ["USER", "NAME"],
    options: { ...JSON_FLAG },
    usage: "user rename USER NAME [--json]",
    help: "changes USER's display name; refused when another user has the same name (ignoring case, letter width and invisible characters)",
  },
  "user teams": {
    positionals: ["USER"],
    options: { team: { type: "string", multiple: true }, ...JSON_FLAG },
    usage: "user teams USER [--team TEAM]... [--json]",
    help: "sets the teams of a person who signs in with a password (no --team: none); single sign-on writes a person's teams from the provider's groups",
  },
  "user disable": { positionals: ["USER"], options: { ...JSON_FLAG }, usage: "user disable USER [--json]", help: "keys, console sessions and open connections stop at once (reversible)" },
  "user enable": { positionals: ["USER"], options: { ...JSON_FLAG }, usage: "user enable USER [--json]", help: "a disabled user's keys and password work again" },
  "user delete": { positionals: ["USER"], options: { ...JSON_FLAG }, usage: "user delete USER [--json]", help: "credentials removed for good; the history keeps the name" },
  "user offboard": {
    positionals: ["USER"],
    options: { ...JSON_FLAG },
    usage: "user offboard USER [--json]",
    help: "someone left: disabled, every console session ended, every API key revoked for good, open connections closed",
  },
  "user set-role": { positionals: ["USER"], options: { role: { type: "string" }, ...JSON_FLAG }, usage: "user set-role USER --role ROLE [--json]", help: `changes a user's role (the last admin stays one). Roles: ${ROLE_LIST}` },
  "key create": { positionals: ["USER"], options: { name: { type: "string" }, ...JSON_FLAG }, usage: "key create USER [--name NAME] [--json]", help: "a new API key for USER, printed once" },
  "key list": { positionals: [], options: { user: { type: "string" }, all: { type: "boolean" }, ...JSON_FLAG }, usage: "key list [--user USER] [--all] [--json]", help: "API keys (prefix only, never the key); --all includes revoked ones" },
  "key revoke": { positionals: ["KEY_ID"], options: { ...JSON_FLAG }, usage: "key revoke KEY_ID [--json]", help: "the key answers 401 at once; its connections end" },
  "grant list": { positionals: [], options: { all: { type: "boolean" }, ...JSON_FLAG }, usage: "grant list [--all] [--json]", help: "standing grants, active ones unless --all" },
  "grant revoke": { positionals: ["GRANT_ID"], options: { ...JSON_FLAG }, usage: "grant revoke GRANT_ID [--json]", help: "the grant approves nothing more" },
  "policy simulate": {
    positionals: ["FILE"],
    options: { days: { type: "string" }, ...JSON_FLAG },
    usage: "policy simulate FILE [--days N] [--json]",
    help: "replays the last N days' requests (default 14, at most 365) through the candidate agents file FILE: per agent and action, what would be settled without a person (and how many of those a person denied or edited), what would ask one; changes nothing but a trail row",
  },
  export: {
    positionals: [],
    options: { session: { type: "string" }, response: { type: "string" }, from: { type: "string" }, to: { type: "string" } },
    usage: "export (--session ID | --response ID | --from TIME [--to TIME])",
    help: "a session's, a response's or a time range's trajectory as JSONL on stdout (TIME: ISO 8601 with offset, e.g. 2026-01-31T00:00:00Z; --to defaults to now)",
  },
};

const usageOf = (command: string): string => {
  const spec = COMMANDS[command];
  return spec ? `Usage: npm run cli -- ${spec.usage}\n  ${spec.help}\nUSER: id, email or exact name.` : USAGE;
};

export const USAGE = `Usage: npm run cli -- COMMAND [ARGS] [--json]
${Object.values(COMMANDS)
  .map((s) => `  ${s.usage}\n      ${s.help}`)
  .join("\n")}
USER: id, email or exact name. --json prints the result (or {"error":{"code","message"}}) as JSON.
Each command says which database it used (on stderr, or as "database" in the JSON).
Exit codes: 0 done, 1 refused or failed (nothing changed), 2 bad command line (nothing opened).`;

/** A bad command line: exit code 2 and the usage of that command (or of all of them). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
  }
}

export type TParsedCommand = { command: string; args: string[]; values: Record<string, string | boolean | undefined>; json: boolean };

/**
 * The command named by argv with its arguments and options, parsed strictly: an unknown command or
 * option, a missing value, a missing or extra argument is a UsageError. Checked before anything is
 * opened, so a typo costs nothing and changes nothing. `null`: help was asked for.
 */
export function parseCommand(argv: readonly string[]): TParsedCommand | { help: string } {
  const words = argv.filter((a) => !a.startsWith("-"));
  const command = COMMANDS[`${words[0]} ${words[1]}`] ? `${words[0]} ${words[1]}` : COMMANDS[words[0] ?? ""] ? (words[0] as string) : null;
  const wantsHelp = argv.includes("--help") || argv.includes("-h");
  if (!command) {
    if (argv.length === 0 || (wantsHelp && words.length === 0)) return { help: USAGE };
    throw new UsageError(words.length === 0 ? "Name a command." : `Unknown command "${words.slice(0, 2).join(" ")}".`, USAGE);
  }
  if (wantsHelp) return { help: usageOf(command) };
  const spec = COMMANDS[command] as TSpec;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options: spec.options, allowPositionals: true, strict: true });
  } catch (error) {
    const e = error as { code?: string; message: string };
    const flag = /'(-[^' ]+)/.exec(e.message)?.[1];
    const message =
      e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION"
        ? `Unknown option ${flag ?? ""} for ${command}.`
        : e.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE"
          ? `Option ${flag ?? ""} of ${command} ${e.message.includes("argument missing") ? "needs a value" : "takes no value"}.`
          : e.message;
    throw new UsageError(message, usageOf(command));
  }
  const args = parsed.positionals.slice(command.split(" ").length);
  if (args.length < spec.positionals.length) throw new UsageError(`${command} needs a ${spec.positionals[args.length]}.`, usageOf(command));
  if (args.length > spec.positionals.length) throw new UsageError(`Unexpected argument "${args[spec.positionals.length]}" for ${command}.`, usageOf(command));
  const values = parsed.values as Record<string, string | boolean | undefined>;
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === "string" && value.startsWith("--")) throw new UsageError(`Option --${name} of ${command} needs a value (got ${value}).`, usageOf(command));
  }
  checkCombinations(command, values);
  return { command, args, values, json: values.json === true };
}

/** Options that must or must not go together (still a bad command line: exit 2). */
function checkCombinations(command: string, v: Record<string, string | boolean | undefined>): void {
  const fail = (message: string) => {
    throw new UsageError(message, usageOf(command));
  };
  if (command === "user add" && v.password !== undefined && v["password-stdin"]) fail("Give --password or --password-stdin, not both.");
  if ((command === "user add" || command === "user set-role") && v.role !== undefined && !(ROLES as readonly string[]).includes(v.role as string)) {
    fail(`--role must be one of ${ROLE_LIST}.`);
  }
  if (command === "user set-role" && v.role === undefined) fail("user set-role needs --role ROLE.");
  if (command === "export") {
    const ways = [v.session, v.response, v.from].filter((x) => x !== undefined).length;
    if (ways !== 1) fail("export needs exactly one of --session, --response and --from.");
    if (v.to !== undefined && v.from === undefined) fail("--to goes with --from.");
  }
}

