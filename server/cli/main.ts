import { existsSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { migrateDb, openDb } from "../../db/client";
import pino from "pino";
import { createAuth } from "../auth/auth";
import { createLocalBus } from "../host/bus";
import { createPgBus } from "../host/pg-bus";
import { controlSocketPath, loadConfig } from "../config";
import { DomainError } from "../core/errors";
import { parseArgs, parseCommand, runCommand, USAGE } from "./commands";

/**
 * Runs the command in the server of this data directory through its control socket (PGlite admits
 * one process per directory); null when no server listens there.
 */
async function viaServer(dataDir: string, argv: string[]): Promise<Record<string, unknown> | null> {
  const socketPath = controlSocketPath(dataDir);
  if (!existsSync(socketPath)) return null;
  const payload = JSON.stringify({ argv });
  const answer = await new Promise<{ status: number; body: string } | null>((resolve, reject) => {
    const req = request({ socketPath, path: "/cli", method: "POST", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    // Nobody listening (a socket left by a server that died): the CLI opens the database itself.
    req.on("error", (error: NodeJS.ErrnoException) => (error.code === "ECONNREFUSED" || error.code === "ENOENT" ? resolve(null) : reject(error)));
    req.end(payload);
  });
  if (!answer) return null;
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  if (answer.status !== 200) throw new DomainError("invalid_request", String(body.detail ?? `The server answered ${answer.status}.`));
  return body;
}

async function direct(argv: string[]): Promise<Record<string, unknown>> {
  const config = loadConfig();
  const db = await openDb({ url: config.databaseUrl, dataDir: config.databaseUrl ? undefined : join(config.dataDir, "pglite") });
  try {
    await migrateDb(db);
    const secret = process.env.BETTER_AUTH_SECRET ?? "cli-does-not-sign-sessions";
    const auth = createAuth({ db: db.db, secret, baseURL: "http://localhost" });
    // Logs go to stderr so `--json` prints only JSON. On PostgreSQL, servers running on the same
    // database hear credential changes (a disabled user) through NOTIFY, as from a replica.
    const log = pino({ level: "warn" }, pino.destination(2));
    const pgBus = db.kind === "postgres" && db.sql ? await createPgBus(db.sql, log) : null;
    try {
      return await runCommand({ db: db.db, auth, bus: pgBus ?? createLocalBus(), log, now: () => new Date() }, argv);
    } finally {
      await pgBus?.close();
    }
  } finally {
    await db.close();
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const { flags } = parseArgs(argv);
  if (argv.length === 0 || flags.help) {
    console.log(USAGE);
    return;
  }
  parseCommand(argv);
  const config = loadConfig();
  const result = (config.databaseUrl ? null : await viaServer(config.dataDir, argv)) ?? (await direct(argv));
  if (flags.json) console.log(JSON.stringify(result));
  else for (const [k, v] of Object.entries(result)) console.log(`${k}: ${v}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
