import { existsSync } from "node:fs";
import { request } from "node:http";
import { userInfo } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { controlSocketPath, describeDatabase, loadConfig } from "../config";
import { DomainError } from "../core/errors";
import { CLI_ORIGIN } from "../core/admin-trail";
import type { TAdminCommandOutput } from "../services/console/admin-commands";
import { adminCommandOf, type TCommandRequest } from "./commands";
import { parseCommand, type TParsedCommand, UsageError } from "./parse";

type TOutcome = { output: TAdminCommandOutput; database: string };

/**
 * Runs the command in the server of this data directory through its control socket (PGlite admits
 * one process per directory); null when no server listens there.
 */
async function viaServer(dataDir: string, parsed: TParsedCommand, body: TCommandRequest): Promise<TOutcome | null> {
  const socketPath = controlSocketPath(dataDir);
  if (!existsSync(socketPath)) return null;
  const payload = JSON.stringify({ command: adminCommandOf(parsed, body.stdin), osUser: body.osUser });
  return new Promise<TOutcome | null>((resolve, reject) => {
    const req = request({ socketPath, path: "/cli", method: "POST", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } }, (res) => {
      const streamed = (res.headers["content-type"] ?? "").startsWith("application/x-ndjson");
      if (res.statusCode === 200 && streamed) {
        const database = decodeURIComponent(String(res.headers["x-countersign-database"] ?? "the running server's"));
        resolve({ output: { kind: "lines", lines: lines(res) }, database });
        return;
      }
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => {
        const answer = JSON.parse(text) as { result?: Record<string, unknown>; database?: string; detail?: string; code?: string };
        if (res.statusCode !== 200) reject(new DomainError((answer.code ?? "invalid_request") as DomainError["code"], String(answer.detail ?? `The server answered ${res.statusCode}.`)));
        else resolve({ output: { kind: "result", result: answer.result ?? {} }, database: answer.database ?? "the running server's" });
      });
    });
    // Nobody listening (a socket left by a server that died): the CLI opens the database itself.
    req.on("error", (error: NodeJS.ErrnoException) => (error.code === "ECONNREFUSED" || error.code === "ENOENT" ? resolve(null) : reject(error)));
    req.end(payload);
  });
}

/** The lines of a JSONL stream. */
async function* lines(stream: Readable): AsyncGenerator<string> {
  let rest = "";
  for await (const chunk of stream) {
    rest += chunk.toString();
    const parts = rest.split("\n");
    rest = parts.pop() ?? "";
    yield* parts;
  }
  if (rest) yield rest;
}

/** Opens the database itself (no server on this data directory, or PostgreSQL), runs the command, prints while it is open. */
async function direct(parsed: TParsedCommand, request: TCommandRequest, print: (outcome: TOutcome) => Promise<void>): Promise<void> {
  // Loaded only now: a bad command line or a running server never pays for the database and services.
  const [{ migrateDb, openDb }, { createAuth }, { createLocalBus }, { createPgBus }, { runAdminCommand }, { default: pino }] = await Promise.all([
    import("../../db/client"),
    import("../auth/auth"),
    import("../host/bus"),
    import("../host/pg-bus"),
    import("../services/console/admin-commands"),
    import("pino"),
  ]);
  const config = loadConfig();
  const pgliteDir = join(config.dataDir, "pglite");
  const database = describeDatabase({ url: config.databaseUrl, pgliteDir });
  const db = await openDb({ url: config.databaseUrl, dataDir: config.databaseUrl ? undefined : pgliteDir });
  try {
    await migrateDb(db);
    const secret = config.authSecret ?? "cli-does-not-sign-sessions";
    const auth = createAuth({ db: db.db, secret, baseURL: "http://localhost" });
    // Logs go to stderr so `--json` prints only JSON. On PostgreSQL, servers running on the same
    // database hear credential changes (a disabled user) through NOTIFY, as from a replica.
    const log = pino({ level: "warn" }, pino.destination(2));
    const pgBus = db.kind === "postgres" && db.sql ? await createPgBus(db.sql, log) : null;
    try {
      const deps = { db: db.db, auth, bus: pgBus ?? createLocalBus(), log, now: () => new Date(), config: { environment: config.environment } };
      const output = await Promise.resolve()
        .then(() => runAdminCommand(deps, { actor: null, origin: CLI_ORIGIN(request.osUser ?? null) }, adminCommandOf(parsed, request.stdin)))
        .catch((error: unknown) => {
          throw Object.assign(error as object, { database });
        });
      await print({ output, database });
    } finally {
      await pgBus?.close();
    }
  } finally {
    await db.close();
  }
}

async function readStdin(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) text += chunk.toString();
  return text;
}

const write = (stream: NodeJS.WriteStream, text: string) => new Promise<void>((resolve) => (stream.write(text) ? resolve() : stream.once("drain", () => resolve())));

/** A result for people: `key: value` lines, lists one row per line. */
function human(result: Record<string, unknown>): string {
  const out: string[] = [];
  for (const [k, v] of Object.entries(result)) {
    if (Array.isArray(v)) {
      out.push(`${k}: ${v.length}`);
      for (const row of v) out.push(`  ${Object.values(row as Record<string, unknown>).map((x) => (x === null ? "-" : typeof x === "object" ? JSON.stringify(x) : String(x))).join("\t")}`);
    } else out.push(k === "usage" ? String(v) : `${k}: ${v}`);
  }
  return `${out.join("\n")}\n`;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const json = argv.includes("--json");
  try {
    const parsed = parseCommand(argv);
    if ("help" in parsed) {
      console.log(parsed.help);
      return 0;
    }
    const body: TCommandRequest = { argv, osUser: userInfo().username, stdin: parsed.values["password-stdin"] ? await readStdin() : undefined };
    const print = async ({ output, database }: TOutcome) => {
      if (output.kind === "lines") {
        await write(process.stderr, `database: ${database}\n`);
        for await (const line of output.lines) await write(process.stdout, `${line}\n`);
        return;
      }
      if (json) await write(process.stdout, `${JSON.stringify({ ...output.result, database })}\n`);
      else {
        await write(process.stderr, `database: ${database}\n`);
        await write(process.stdout, human(output.result));
      }
    };
    const config = loadConfig();
    const remote = config.databaseUrl ? null : await viaServer(config.dataDir, parsed, body);
    if (remote) await print(remote);
    else await direct(parsed, body, print);
    return 0;
  } catch (error) {
    const usage = error instanceof UsageError;
    const code = usage ? "usage" : error instanceof DomainError ? error.code : "internal";
    const message = error instanceof Error ? error.message : String(error);
    const database = (error as { database?: string }).database;
    if (json) {
      console.log(JSON.stringify({ error: { code, message, ...(usage ? { usage: error.usage } : {}) }, ...(database ? { database } : {}) }));
    } else {
      if (database) console.error(`database: ${database}`);
      console.error(usage ? `${message}\n${error.usage}` : message);
    }
    return usage ? 2 : 1;
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
