import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { migrateDb, openDb } from "../../db/client";
import { createAuth } from "../auth/auth";
import { loadConfig } from "../config";
import { DomainError } from "../core/errors";
import { parseArgs, runCommand, USAGE } from "./commands";

type TControl = { pid: number; url: string; token: string };

/** The running server on this data directory, if any (PGlite allows one process per directory). */
function runningServer(dataDir: string): TControl | null {
  const file = join(dataDir, "server.json");
  if (!existsSync(file)) return null;
  try {
    const control = JSON.parse(readFileSync(file, "utf8")) as TControl;
    process.kill(control.pid, 0);
    return control;
  } catch {
    return null;
  }
}

async function viaServer(control: TControl, argv: string[]): Promise<Record<string, unknown>> {
  const res = await fetch(`${control.url}/internal/cli`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-countersign-control": control.token },
    body: JSON.stringify({ argv }),
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new DomainError("invalid_request", String(body.detail ?? `The server answered ${res.status}.`));
  return body;
}

async function direct(argv: string[]): Promise<Record<string, unknown>> {
  const config = loadConfig();
  const db = await openDb({ url: config.databaseUrl, dataDir: config.databaseUrl ? undefined : join(config.dataDir, "pglite") });
  try {
    await migrateDb(db);
    const secret = process.env.BETTER_AUTH_SECRET ?? "cli-does-not-sign-sessions";
    const auth = createAuth({ db: db.db, secret, baseURL: "http://localhost" });
    return await runCommand({ db: db.db, auth }, argv);
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
  const config = loadConfig();
  const control = config.databaseUrl ? null : runningServer(config.dataDir);
  const result = control ? await viaServer(control, argv) : await direct(argv);
  if (flags.json) console.log(JSON.stringify(result));
  else for (const [k, v] of Object.entries(result)) console.log(`${k}: ${v}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
