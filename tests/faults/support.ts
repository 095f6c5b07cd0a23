import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { expect } from "vitest";
import { auditDatabase, formatAudit, type TAuditReport, type TQuery } from "../../scripts/load/audit";
import { freePort } from "../../server/testing/server-process";

/** The fault suite runs on PostgreSQL (TEST_DB=postgres and TEST_DATABASE_URL). */
export const onPostgres = process.env.TEST_DB === "postgres" && Boolean(process.env.TEST_DATABASE_URL);

/** The fault suites are about PostgreSQL (replicas, restarts, pools): without it they fail, never skip. */
export function requirePostgres(): void {
  if (!onPostgres) {
    throw new Error("The fault suites need PostgreSQL: run them with TEST_DB=postgres and TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test (npm run test:faults sets TEST_DB).");
  }
}

/** A read-only query function over a PostgreSQL URL, for the audit and direct checks. */
export function openQuery(url: string): { query: TQuery; sql: postgres.Sql; close: () => Promise<void> } {
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  return { sql, query: async (text) => [...(await sql.unsafe(text))] as Record<string, unknown>[], close: () => sql.end({ timeout: 5 }) };
}

/** Audits a database (see scripts/load/audit.ts) and fails the test with the report when a check fails. */
export async function expectAuditPasses(url: string): Promise<TAuditReport> {
  const db = openQuery(url);
  try {
    const report = await auditDatabase(db.query);
    expect(report.ok, formatAudit(report).join("\n")).toBe(true);
    return report;
  } finally {
    await db.close();
  }
}

/** Lines of a workspace file (0 when missing). */
export const lines = (dir: string, file: string): number => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), "utf8").split("\n").filter(Boolean).length : 0);

/** Retries `fn` while it throws or answers a retryable status (503, network errors), bounded. */
export async function retrying<T>(fn: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (let i = 0; Date.now() < deadline && i < 10_000; i++) {
    try {
      const value = await fn();
      if (accept(value)) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`gave up retrying: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
}

export type TOwnCluster = {
  name: string;
  port: number;
  /** A URL for a database on this cluster. */
  url: (database?: string) => string;
  stop: () => void;
  start: () => void;
  restart: () => void;
  drop: () => void;
};

/**
 * A throwaway PostgreSQL cluster of our own (never the shared one), on a free port with trust
 * authentication on loopback, for restart faults. Null (with the reason) when it cannot be made:
 * not root, or the Debian cluster tools are missing.
 */
export async function createOwnCluster(): Promise<TOwnCluster | { reason: string }> {
  if (process.getuid?.() !== 0) return { reason: "creating a PostgreSQL cluster needs root (pg_createcluster)" };
  const versions = existsSync("/usr/lib/postgresql") ? execFileSync("ls", ["/usr/lib/postgresql"], { encoding: "utf8" }).split(/\s+/).filter(Boolean) : [];
  const version = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!version || spawnSync("which", ["pg_createcluster"]).status !== 0) return { reason: "pg_createcluster / a PostgreSQL server package is not installed" };
  const name = `cs_fault_${randomBytes(4).toString("hex")}`;
  const port = await freePort();
  const run = (cmd: string, args: string[]) => {
    const out = spawnSync(cmd, args, { encoding: "utf8", timeout: 120_000 });
    if (out.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${out.status}): ${out.stderr}${out.stdout}`);
  };
  const ctl = (action: string, ...extra: string[]) => run("pg_ctlcluster", ["--skip-systemctl-redirect", version, name, action, ...extra]);
  try {
    run("pg_createcluster", [version, name, "-p", String(port), "--", "--auth=trust"]);
    ctl("start");
  } catch (error) {
    spawnSync("pg_dropcluster", ["--stop", version, name]);
    return { reason: (error as Error).message };
  }
  return {
    name,
    port,
    url: (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop: () => ctl("stop", "-m", "fast"),
    start: () => ctl("start"),
    restart: () => ctl("restart", "-m", "fast"),
    drop: () => {
      spawnSync("pg_dropcluster", ["--stop", version, name], { encoding: "utf8", timeout: 120_000 });
    },
  };
}

/** Parses an SSE body into its frames. */
export function sseFrames(text: string): Array<{ type: string; sequence: number; status?: string; [k: string]: unknown }> {
  return text
    .split("\n")
    .filter((l) => l.startsWith("data:"))
    .map((l) => JSON.parse(l.slice(5)));
}

/** POST/GET with an API key (no throw on network errors: status 0). */
export async function call(url: string, key: string, body?: unknown, timeoutMs = 60_000): Promise<{ status: number; body: Record<string, unknown> | null; text: string }> {
  try {
    const res = await fetch(url, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: Record<string, unknown> | null = null;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {}
    return { status: res.status, body: parsed, text };
  } catch (error) {
    return { status: 0, body: null, text: String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message) };
  }
}
