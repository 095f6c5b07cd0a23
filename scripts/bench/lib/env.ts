import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import postgres from "postgres";
import { PgliteStatements } from "../../../db/pglite-statements";
import { createTestDatabaseUrl } from "../../../db/testing";
import { demoApiKey, freePort, startServerProcess, type TServerProcess } from "../../../server/testing/server-process";

export type TKind = "pglite" | "postgres";

/** Child processes still running; killed if the bench exits early so no server is left behind. */
const children = new Set<ChildProcess>();
export const killChildren = (): void => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
};
process.once("exit", killChildren);

/** What a benchmark module gets: the database kind, sizes, and where PostgreSQL lives. */
export type TCtx = { kind: TKind; quick: boolean; adminUrl: string };

/** A fresh database plus a data directory (PGlite keeps its files in `<dataDir>/pglite`). */
export type TFresh = { kind: TKind; url?: string; dataDir: string; pgliteDir: string; drop: () => Promise<void> };

export async function freshDatabase(ctx: TCtx): Promise<TFresh> {
  const dataDir = mkdtempSync(join(tmpdir(), "countersign-bench-"));
  const rm = () => rmSync(dataDir, { recursive: true, force: true });
  if (ctx.kind === "pglite") return { kind: "pglite", dataDir, pgliteDir: join(dataDir, "pglite"), drop: async () => rm() };
  process.env.TEST_DB = "postgres";
  process.env.TEST_DATABASE_URL = ctx.adminUrl;
  const created = await createTestDatabaseUrl();
  if (!created) throw new Error("no PostgreSQL");
  const drop = async () => {
    await created.drop();
    rm();
  };
  return { kind: "postgres", url: created.url, dataDir, pgliteDir: join(dataDir, "pglite"), drop };
}

export type TServer = { url: string; key: string; pid: number; proc: TServerProcess; rssKb: () => number; stop: () => Promise<void> };

/**
 * `server/main.ts` as its own process (API only) on the fresh database, with `env` added; the demo
 * admin's key. LOG_LEVEL=debug: the only debug line on the benchmarked paths is the one per exec
 * that item 1 reads ("command finished", with the fork's own time); the rest is warn or above.
 */
export async function startServer(fresh: TFresh, env: Record<string, string> = {}): Promise<TServer> {
  const proc = await startServerProcess({ dataDir: fresh.dataDir, port: await freePort(), databaseUrl: fresh.url, env: { LOG_LEVEL: "debug", ...env } });
  const key = await demoApiKey(fresh.dataDir);
  const pid = proc.child.pid as number;
  children.add(proc.child);
  const stop = async () => {
    await proc.kill("SIGTERM");
    children.delete(proc.child);
  };
  return { url: proc.url, key, pid, proc, rssKb: () => rssKb(pid), stop };
}

/** VmRSS of a process, in kB, from /proc. */
export function rssKb(pid: number): number {
  const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+)\s+kB/);
  return m ? Number(m[1]) : Number.NaN;
}

/** Lines the server logged at warn or above (pino JSON), for the report. */
export function serverProblems(output: string): string[] {
  return output
    .split("\n")
    .filter((l) => /"level":(40|50|60)/.test(l) || /Error|Warning|ECONN|uncaught/i.test(l))
    .filter((l) => !l.startsWith("(Use `node --trace-warnings"))
    .map((l) => l.slice(0, 400));
}

/** The bare driver, used for the physical limits: no ORM, no app, same database and driver. */
export type TRaw = {
  kind: TKind;
  query: (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;
  tx: <T>(fn: (q: (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>) => Promise<T>) => Promise<T>;
  exec: (text: string) => Promise<void>;
  close: () => Promise<void>;
  /** PGlite only: the same database with every statement a named prepared statement (as the app runs them). */
  withPreparedStatements?: () => TRaw;
};

/** postgres.js (prepared statements, its default) or PGlite on disk in `dir`. */
export async function openRaw(fresh: { kind: TKind; url?: string }, options: { max?: number; dir?: string } = {}): Promise<TRaw> {
  if (fresh.kind === "postgres") {
    const sql = postgres(fresh.url as string, { max: options.max ?? 16, onnotice: () => {} });
    const q = (s: postgres.Sql) => async (text: string, params: unknown[] = []) => [...(await s.unsafe(text, params as never[], { prepare: true }))] as Record<string, unknown>[];
    return {
      kind: "postgres",
      query: q(sql),
      tx: async (fn) => (await sql.begin((tx) => fn(q(tx as unknown as postgres.Sql)))) as never,
      exec: async (text) => void (await sql.unsafe(text)),
      close: () => sql.end({ timeout: 5 }),
    };
  }
  const pg = options.dir ? new PGlite(options.dir) : new PGlite();
  await pg.waitReady;
  return rawFromPglite(pg);
}

/**
 * The bare driver over an already open PGlite (a handle's `pglite`): PGlite's own `query`, its
 * default (each statement parsed and planned again). `prepared`: every statement a named prepared
 * statement instead, as the app's statements run on PGlite (db/pglite-statements.ts): the same
 * database through `withPreparedStatements()`, whose raw decide item 1 prints beside the limit.
 */
export function rawFromPglite(pg: PGlite, options: { prepared?: boolean } = {}): TRaw {
  const statements = options.prepared ? new PgliteStatements(pg) : null;
  const q = (tx?: Transaction) => async (text: string, params: unknown[] = []) =>
    (statements ? await statements.query<Record<string, unknown>>(text, params, {}, tx) : await (tx ?? pg).query<Record<string, unknown>>(text, params)).rows;
  return {
    kind: "pglite",
    query: q(),
    tx: (fn) => pg.transaction((tx) => fn(q(tx))),
    ...(statements ? {} : { withPreparedStatements: () => rawFromPglite(pg, { prepared: true }) }),
    exec: async (text) => void (await pg.exec(text)),
    close: () => pg.close(),
  };
}

/** A scratch directory for a raw PGlite (on disk, like the server's). */
export const scratchDir = (): { dir: string; rm: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), "countersign-bench-raw-"));
  return { dir, rm: () => rmSync(dir, { recursive: true, force: true }) };
};

/** Sizes: full run, or `--quick` for CI. */
export const size = (ctx: TCtx, full: number, quick: number): number => (ctx.quick ? quick : full);

export type TBare = { url: string; pid: number; output: () => string; stop: () => Promise<void> };

/** Starts scripts/bench/bare-server.ts as its own process on the same database (PGlite: a scratch dir). */
export async function startBare(fresh: { kind: TKind; url?: string }): Promise<TBare> {
  const port = await freePort();
  const scratch = fresh.kind === "pglite" ? scratchDir() : null;
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/bench/bare-server.ts"], {
    env: { ...process.env, BARE_PORT: String(port), ...(fresh.url ? { BARE_DB_URL: fresh.url } : { BARE_PGLITE_DIR: scratch?.dir }) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      if (output.includes("bare ready")) resolve();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`bare server exited ${code}: ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid as number,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      children.delete(child);
      scratch?.rm();
    },
  };
}
