/**
 * `npm run bench [-- --quick] [--only=approvals,capacity,ingest,fanout,poll,console,analytics] [--db=pglite|postgres|both]`
 * Runs each benchmark beside its physical limit measured in the same run, prints a markdown
 * table and writes bench-results/latest.json (+ latest.md with notes and query plans).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { benchAnalytics } from "./analytics";
import { approveOne, benchApprovals, ENGINE_AGENT, suspendOne, type TSuspended } from "./approvals";
import { benchCapacity } from "./capacity";
import { benchCommits } from "./commits";
import { benchConsole } from "./console";
import { benchFanout } from "./fanout";
import { benchIngest } from "./ingest";
import { freshDatabase, killChildren, serverProblems, startBare, startServer, type TBare, type TCtx, type TKind } from "./lib/env";
import { Client, loadProblems } from "./lib/http";
import { judge, markdownTable, type TOutcome, type TRow } from "./lib/stats";
import { benchPoll } from "./poll";

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killChildren();
    process.exit(signal === "SIGINT" ? 130 : 143);
  });
}

// The per-key rate limit (default 1000 req/s per process) is a policy, not a capacity: the bench
// keeps the guard in the path but out of reach, unless COUNTERSIGN_RATE_LIMIT is set explicitly.
process.env.COUNTERSIGN_RATE_LIMIT ??= "1000000:1000000,ip=1000000:1000000";
// Likewise the cap on open streams per user (default 256): the fan-out opens 1,000 as one user.
process.env.COUNTERSIGN_MAX_STREAMS_PER_USER ??= "off";

const ALL = ["commits", "approvals", "poll", "fanout", "capacity", "ingest", "console", "analytics"] as const;
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
process.chdir(root);

const args = process.argv.slice(2);
const arg = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const quick = args.includes("--quick");
const only = new Set((arg("only") ?? ALL.join(",")).split(",").map((s) => s.trim()));
for (const name of only) if (!(ALL as readonly string[]).includes(name)) throw new Error(`unknown benchmark ${name}; known: ${ALL.join(", ")}`);
const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

async function postgresAnswers(): Promise<string | null> {
  const sql = postgres(adminUrl, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    const [row] = await sql`select version() as v`;
    return String(row?.v);
  } catch {
    return null;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

const pgVersion = await postgresAnswers();
const dbArg = arg("db") ?? (pgVersion ? "both" : "pglite");
const kinds: TKind[] = dbArg === "both" ? ["pglite", "postgres"] : [dbArg as TKind];
if (kinds.includes("postgres") && !pgVersion) throw new Error(`PostgreSQL does not answer at ${adminUrl}`);

const rows: TRow[] = [];
const problems: string[] = [];
const notes: string[] = [];
let failed = 0;
const started = new Date();
const load0 = os.loadavg();

async function step(name: string, kind: TKind, fn: () => Promise<TOutcome | TRow[]>): Promise<void> {
  const t0 = Date.now();
  process.stderr.write(`• ${name} on ${kind}…`);
  try {
    const out = await fn();
    const outcome = Array.isArray(out) ? { rows: out } : out;
    rows.push(...outcome.rows);
    problems.push(...(outcome.problems ?? []));
    notes.push(...(outcome.notes ?? []));
    process.stderr.write(` ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  } catch (error) {
    failed++;
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    problems.push(`${name}/${kind} FAILED: ${message.slice(0, 1500)}`);
    process.stderr.write(` FAILED: ${message.split("\n")[0]}\n`);
  }
}

/** Items 1, 2, 6, 5 share one server process (and the bare baseline process) per database. */
async function serverGroup(ctx: TCtx): Promise<void> {
  const fresh = await freshDatabase(ctx);
  // Item 1's engine-only round trip uses an agent of its own (the built-in ones stay).
  const agentsFile = join(fresh.dataDir, "bench-agents.json");
  writeFileSync(agentsFile, JSON.stringify({ builtins: true, agents: [ENGINE_AGENT] }));
  const [server, bare] = await Promise.all([startServer(fresh, { COUNTERSIGN_AGENTS_FILE: agentsFile }), startBare(fresh)]);
  const b: TBare = bare;
  try {
    let completed: TSuspended[] = [];
    if (only.has("approvals")) {
      await step("approvals (1, 2)", ctx.kind, async () => {
        const out = await benchApprovals(ctx, server, b);
        completed = out.completed;
        return out.rows;
      });
    }
    if (only.has("poll")) {
      await step("poll (6)", ctx.kind, async () => {
        if (completed.length === 0) {
          const c = new Client(server.url, server.key, 1);
          for (let i = 0; i < 50; i++) {
            const s = await suspendOne(c);
            await approveOne(c, s.approvalId);
            completed.push(s);
          }
          c.close();
        }
        return benchPoll(ctx, server, b, completed);
      });
    }
    if (only.has("fanout")) {
      await step("fanout (5)", ctx.kind, () => benchFanout(ctx, server, b));
    }
  } finally {
    problems.push(...serverProblems(server.proc.output()).map((l) => `server/${ctx.kind}: ${l}`));
    problems.push(...serverProblems(bare.output()).map((l) => `bare/${ctx.kind}: ${l}`));
    await bare.stop();
    await server.stop();
    await fresh.drop();
  }
}

for (const kind of kinds) {
  const ctx: TCtx = { kind, quick, adminUrl };
  if (only.has("approvals") || only.has("poll") || only.has("fanout")) {
    await serverGroup(ctx).catch((error: unknown) => {
      failed++;
      problems.push(`server group/${kind} FAILED: ${error instanceof Error ? error.stack : String(error)}`);
    });
  }
  if (only.has("commits") && kind === "postgres") await step("commits per cycle", kind, () => benchCommits(ctx));
  if (only.has("capacity")) await step("capacity (3)", kind, () => benchCapacity(ctx));
  if (only.has("ingest")) await step("ingest (4)", kind, () => benchIngest(ctx));
  if (only.has("console")) await step("console (7)", kind, () => benchConsole(ctx));
  if (only.has("analytics")) await step("analytics (8)", kind, () => benchAnalytics(ctx));
}

const judged = rows.map(judge);
const table = markdownTable(judged);
const machine = {
  cpus: os.cpus().length,
  cpu: os.cpus()[0]?.model,
  memGiB: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  postgres: pgVersion,
  loadavgStart: load0.map((x) => Number(x.toFixed(2))),
  loadavgEnd: os.loadavg().map((x) => Number(x.toFixed(2))),
};
/** Identical lines (e.g. one warning per subscriber) are shown once with a count. */
const counted = new Map<string, number>();
for (const p of [...problems, ...loadProblems]) counted.set(p, (counted.get(p) ?? 0) + 1);
const allProblems = [...counted].map(([p, n]) => (n > 1 ? `${p} (×${n})` : p));
const header = `Countersign bench ${quick ? "(--quick) " : ""}${started.toISOString()} — ${machine.cpus} × ${machine.cpu}, Node ${machine.node}, load average ${machine.loadavgStart.join(" / ")} → ${machine.loadavgEnd.join(" / ")}`;
console.log(`\n${header}\n\n${table}\n`);
if (allProblems.length > 0) console.log(`Problems seen (${allProblems.length}):\n${allProblems.map((p) => `- ${p}`).join("\n")}\n`);
mkdirSync("bench-results", { recursive: true });
writeFileSync("bench-results/latest.json", `${JSON.stringify({ started: started.toISOString(), finished: new Date().toISOString(), quick, kinds, machine, rows: judged, problems: allProblems, notes }, null, 2)}\n`);
writeFileSync("bench-results/latest.md", `${header}\n\n${table}\n\n## Problems\n\n${allProblems.map((p) => `- ${p}`).join("\n") || "none"}\n\n## Notes\n\n${notes.map((n) => `\`\`\`\n${n}\n\`\`\``).join("\n\n")}\n`);
console.log(`Wrote bench-results/latest.json and bench-results/latest.md (${((Date.now() - started.getTime()) / 1000).toFixed(0)} s)`);
process.exit(failed > 0 ? 1 : 0);
