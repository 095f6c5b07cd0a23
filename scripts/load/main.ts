/**
 * `npm run load -- [options]`: drives many concurrent sessions through Countersign and audits the
 * database afterwards. Exits 0 when the audit passes and nothing unexpected was answered, 1 when
 * the audit fails (or there were unexpected answers), 2 on a usage or setup error.
 *
 *   --url <http://127.0.0.1:PORT>   a running replica (repeat for several; requests go round-robin)
 *   --key <api key>                 API key for --url (or COUNTERSIGN_API_KEY)
 *   --spawn <N>                     start N replicas on a fresh PostgreSQL database (one PGlite
 *                                   server when no PostgreSQL answers, or with --pglite)
 *   --admin-url <postgres url>      where --spawn creates its database (default TEST_DATABASE_URL
 *                                   or postgres://postgres@127.0.0.1:5432/test)
 *   --database-url <postgres url>   the database to audit with --url (--spawn audits its own)
 *   --sessions <n>      flows to run (default 200)      --concurrency <n>  in flight (default 16)
 *   --duration <s>      hard stop (default 60)          --questions <0..1> share of question flows (0.25)
 *   --deny <0..1>       share of denials (0.1)          --duplicates <0..1> decisions raced on two replicas (0.2)
 *   --keep              keep the spawned database       --json <file>      write the full report
 *   --no-audit          skip the audit (only with --url and no --database-url)
 * Loopback only: every URL must point at this machine.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { createTestDatabaseUrl } from "../../db/testing";
import { demoApiKey, freePort, startServerProcess, type TServerProcess } from "../../server/testing/server-process";
import { auditDatabase, formatAudit, type TAuditReport, type TQuery } from "./audit";
import { checkSideEffects, formatLoad, quiesce, runLoad } from "./run";

type TArgs = Map<string, string[]>;

function parseArgs(argv: string[]): TArgs {
  const args: TArgs = new Map();
  const flags = new Set(["keep", "pglite", "no-audit", "help"]);
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i] as string;
    if (!raw.startsWith("--")) throw new Error(`unexpected argument ${raw}`);
    const [name, inline] = raw.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    const value = inline ?? (flags.has(name) ? "true" : argv[++i]);
    if (value === undefined) throw new Error(`--${name} needs a value`);
    args.set(name, [...(args.get(name) ?? []), value]);
  }
  return args;
}

const one = (args: TArgs, name: string): string | undefined => args.get(name)?.at(-1);
const number = (args: TArgs, name: string, fallback: number, min: number, max: number): number => {
  const raw = one(args, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`--${name} must be a number in [${min}, ${max}]`);
  return value;
};

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);
function loopbackOnly(value: string, what: string): string {
  const url = new URL(value);
  if (!LOOPBACK.has(url.hostname) && !/^127\./.test(url.hostname)) throw new Error(`${what} ${value} is not a loopback address; the load tool only drives this machine`);
  return value.replace(/\/+$/, "");
}

async function postgresAnswers(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

type TTarget = {
  urls: string[];
  key: string;
  /** Opens the audit query (PGlite only once its server stopped). */
  openAudit: (() => Promise<{ query: TQuery; close: () => Promise<void> }>) | null;
  /** Stops spawned servers before a PGlite audit; no-op otherwise. */
  beforeAudit: () => Promise<void>;
  cleanup: () => Promise<void>;
  describe: string;
  /** The spawned servers' data directories (side effects are checked there); empty for --url targets. */
  dataDirs: string[];
};

const postgresAudit = (url: string) => async () => {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  return { query: (async (text: string) => [...(await sql.unsafe(text))] as Record<string, unknown>[]) as TQuery, close: () => sql.end({ timeout: 5 }) };
};

async function spawnTarget(args: TArgs, n: number): Promise<TTarget> {
  const adminUrl = one(args, "admin-url") ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const pglite = one(args, "pglite") === "true" || !(await postgresAnswers(loopbackOnly(adminUrl, "--admin-url")));
  const dirs: string[] = [];
  const servers: TServerProcess[] = [];
  const killAll = () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill("SIGKILL");
  };
  process.once("exit", killAll);
  const env = { BETTER_AUTH_SECRET: randomBytes(32).toString("base64url"), COUNTERSIGN_SECRET_KEY: randomBytes(32).toString("base64"), LOG_LEVEL: "warn" };
  if (pglite) {
    if (n > 1) process.stderr.write("PGlite admits one process per data directory: starting one server instead of several.\n");
    const dir = mkdtempSync(join(tmpdir(), "countersign-load-"));
    dirs.push(dir);
    const server = await startServerProcess({ dataDir: dir, port: await freePort(), env });
    servers.push(server);
    const key = await demoApiKey(dir);
    let stopped = false;
    const stop = async () => {
      if (!stopped) await server.kill("SIGTERM");
      stopped = true;
    };
    return {
      urls: [server.url],
      key,
      describe: `1 server on PGlite (${dir})`,
      dataDirs: dirs,
      beforeAudit: stop,
      openAudit: async () => {
        const pg = new PGlite(join(dir, "pglite"));
        await pg.waitReady;
        return { query: async (text) => (await pg.query<Record<string, unknown>>(text)).rows, close: () => pg.close() };
      },
      cleanup: async () => {
        await stop();
        if (one(args, "keep") !== "true") rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  process.env.TEST_DB = "postgres";
  process.env.TEST_DATABASE_URL = adminUrl;
  const database = await createTestDatabaseUrl();
  if (!database) throw new Error("could not create a PostgreSQL database");
  try {
    for (let i = 0; i < n; i++) dirs.push(mkdtempSync(join(tmpdir(), "countersign-load-")));
    const ports = await Promise.all(dirs.map(() => freePort()));
    // The first replica migrates and creates the demo operator whose key the load uses.
    servers.push(await startServerProcess({ dataDir: dirs[0] as string, port: ports[0] as number, databaseUrl: database.url, env }));
    const key = await demoApiKey(dirs[0] as string);
    servers.push(...(await Promise.all(dirs.slice(1).map((dir, i) => startServerProcess({ dataDir: dir, port: ports[i + 1] as number, databaseUrl: database.url, env })))));
    return {
      urls: servers.map((s) => s.url),
      key,
      describe: `${n} replica${n === 1 ? "" : "s"} on PostgreSQL (${database.url})`,
      dataDirs: dirs,
      beforeAudit: async () => {},
      openAudit: postgresAudit(database.url),
      cleanup: async () => {
        for (const s of servers) await s.kill("SIGTERM");
        if (one(args, "keep") !== "true") await database.drop();
        else process.stderr.write(`kept database ${database.url}\n`);
        for (const d of dirs) rmSync(d, { recursive: true, force: true });
      },
    };
  } catch (error) {
    killAll();
    await database.drop().catch(() => {});
    throw error;
  }
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.has("help")) {
    process.stdout.write(`${(await import("node:fs")).readFileSync(new URL(import.meta.url), "utf8").split("*/")[0]}*/\n`);
    return 0;
  }
  const sessions = number(args, "sessions", 200, 1, 1_000_000);
  const concurrency = number(args, "concurrency", 16, 1, 2000);
  const durationMs = number(args, "duration", 60, 1, 24 * 3600) * 1000;
  const spawnCount = number(args, "spawn", 0, 0, 16);
  let target: TTarget;
  if (spawnCount > 0) {
    if (args.has("url")) throw new Error("use either --url or --spawn, not both");
    target = await spawnTarget(args, spawnCount);
  } else {
    const urls = (args.get("url") ?? []).map((u) => loopbackOnly(u, "--url"));
    if (urls.length === 0) throw new Error("give --url <replica> (repeatable) or --spawn <N>; --help for all options");
    const key = one(args, "key") ?? process.env.COUNTERSIGN_API_KEY;
    if (!key) throw new Error("--key <api key> (or COUNTERSIGN_API_KEY) is needed with --url");
    const databaseUrl = one(args, "database-url");
    if (!databaseUrl && one(args, "no-audit") !== "true") throw new Error("--database-url is needed to audit a run against --url (or pass --no-audit)");
    target = {
      urls,
      key,
      describe: `${urls.length} replica${urls.length === 1 ? "" : "s"} at ${urls.join(", ")}`,
      dataDirs: [],
      beforeAudit: async () => {},
      openAudit: databaseUrl ? postgresAudit(loopbackOnly(databaseUrl, "--database-url")) : null,
      cleanup: async () => {},
    };
  }
  try {
    process.stderr.write(`load: ${sessions} sessions, concurrency ${concurrency}, hard stop after ${durationMs / 1000} s, against ${target.describe}\n`);
    const result = await runLoad({
      urls: target.urls,
      key: target.key,
      sessions,
      concurrency,
      durationMs,
      questionShare: number(args, "questions", 0.25, 0, 1),
      denyShare: number(args, "deny", 0.1, 0, 1),
      duplicateShare: number(args, "duplicates", target.urls.length > 1 ? 0.2 : 0.1, 0, 1),
      onProgress: (line) => process.stderr.write(`${line}\n`),
    });
    const settled = await quiesce({ urls: target.urls, key: target.key }, result.flows);
    result.sideEffects = checkSideEffects(result.flows, target.dataDirs);
    const lines = formatLoad(result, target.urls.length);
    lines.push(`  after the run: ${settled.settled} open responses settled, ${settled.stillRunning.length} still in progress`);
    let audit: TAuditReport | null = null;
    if (target.openAudit) {
      await target.beforeAudit();
      const db = await target.openAudit();
      try {
        audit = await auditDatabase(db.query);
      } finally {
        await db.close();
      }
      lines.push(...formatAudit(audit));
    } else lines.push("audit: skipped (--no-audit)");
    process.stdout.write(`${lines.join("\n")}\n`);
    const json = one(args, "json");
    if (json) writeFileSync(json, JSON.stringify({ target: target.describe, sessions, concurrency, durationMs, ...result, flows: undefined, problems: result.flows.filter((f) => f.outcome === "error"), audit }, null, 2));
    const unexpected = Object.keys(result.errors).length > 0 || result.sideEffects.violations.length > 0;
    return (audit && !audit.ok) || unexpected ? 1 : 0;
  } finally {
    await target.cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`load: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
