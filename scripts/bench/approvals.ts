import { cpus } from "node:os";
import { execTimingsAfter, forkMicro, sandboxCost } from "./exec-fork";
import { childPid, cpuMeter, machineCpuMs, postgresCpuMs, processCpuMs, processTreeCpuMs } from "./lib/cpu";
import { type TBare, type TCtx, type TServer, size } from "./lib/env";
import { Client, runLoad } from "./lib/http";
import { now, percentile, sleep, type TRow } from "./lib/stats";

/** A run that needs one approval (exec `true`), then echoes: the round trip the issue names. */
export const APPROVAL_SCRIPT = {
  input: { script: [{ toolCalls: [{ name: "exec", arguments: { command: "true" } }] }, { toolCalls: [{ name: "echo", arguments: { text: "done" } }] }] },
};

/**
 * The agent of the engine-only round trip: `echo` needs a person's approval when its text is
 * "approve me", so the approved tool runs in the server and no process starts (no sandbox).
 */
export const ENGINE_AGENT = {
  name: "bench-engine",
  harness: "scripted",
  tools: { echo: { approval: "never", predicates: [{ match: [{ argument: "text", regex: "^approve me$" }], approval: "always" }] } },
};
const ENGINE_SCRIPT = {
  agent: ENGINE_AGENT.name,
  input: { script: [{ toolCalls: [{ name: "echo", arguments: { text: "approve me" } }] }, { toolCalls: [{ name: "echo", arguments: { text: "done" } }] }] },
};

export type TSuspended = { id: string; sessionId: string; approvalId: string };

type TEnvelope = { id: string; sessionId: string; status: string; requiredAction?: { id: string } | null };

/** POST /v1/responses → requires_action; returns the pending approval. */
export async function suspendOne(client: Client, body: unknown = APPROVAL_SCRIPT): Promise<TSuspended> {
  const env = await client.json<TEnvelope>("POST", "/v1/responses", body);
  if (env.status !== "requires_action" || !env.requiredAction) throw new Error(`expected requires_action, got ${env.status}`);
  return { id: env.id, sessionId: env.sessionId, approvalId: env.requiredAction.id };
}

/** POST /v1/approvals/{id} approve → the completed envelope. */
export async function approveOne(client: Client, approvalId: string): Promise<void> {
  const env = await client.json<TEnvelope>("POST", `/v1/approvals/${approvalId}`, { decision: "approve" });
  if (env.status !== "completed") throw new Error(`expected completed, got ${env.status}`);
}

/** p50 of each round trip less the server's wait for its exec; NaN unless there is exactly one wait per round trip, in order. */
function p50LessTheWait(roundTripMs: readonly number[], waitMs: readonly number[]): number {
  return waitMs.length === roundTripMs.length ? percentile(roundTripMs.map((ms, i) => ms - (waitMs[i] ?? 0)), 50) : Number.NaN;
}

/** Items 1 and 2: approval round trip (latency, throughput at 16) and suspend latency, beside the raw limits. */
export async function benchApprovals(ctx: TCtx, server: TServer, bare: TBare): Promise<{ rows: TRow[]; completed: TSuspended[] }> {
  const db = ctx.kind;
  const one = new Client(server.url, server.key, 1);
  const many = new Client(server.url, server.key, 16);
  const nSingle = size(ctx, 400, 20);
  const nMany = size(ctx, 800, 48);

  for (let i = 0; i < size(ctx, 30, 5); i++) await approveOne(one, (await suspendOne(one)).approvalId);

  const suspendMs: number[] = [];
  const single: TSuspended[] = [];
  for (let i = 0; i < nSingle; i++) {
    const t0 = now();
    single.push(await suspendOne(one));
    suspendMs.push(now() - t0);
  }
  /** Approves one suspended run, adding the round trip's time to `into`. */
  const timed = async (approvalId: string, into: number[]) => {
    const t0 = now();
    await approveOne(one, approvalId);
    into.push(now() - t0);
  };
  const roundTripMs: number[] = [];
  const logFrom = server.proc.output().length;
  for (const s of single) await timed(s.approvalId, roundTripMs);
  // The exec inside each of those round trips, as the server measured it (one "command finished" line each).
  const execs = await execTimingsAfter(server.proc.output, logFrom, roundTripMs.length);
  // The round trip without the exec's own time (issue 16, point 3): each sequential round trip ran exactly one exec, in order.
  const withoutExecP50 = p50LessTheWait(roundTripMs, execs.waitMs);

  const denyMs: number[] = [];
  for (let i = 0; i < size(ctx, 100, 5); i++) {
    const s = await suspendOne(one);
    const t0 = now();
    const res = await one.json<{ status: string }>("POST", `/v1/approvals/${s.approvalId}`, { decision: "deny" });
    if (res.status !== "denied") throw new Error(`expected denied, got ${res.status}`);
    denyMs.push(now() - t0);
  }

  const pool: TSuspended[] = [];
  const created = await runLoad({ concurrency: 16, total: nMany, task: async () => void pool.push(await suspendOne(many)) });
  // CPU per round trip at 16 sessions, by who spent it (issue 16, point 3: what bounds the throughput).
  const spawner = childPid(server.pid, "spawner-process");
  const meter = cpuMeter({
    server: () => processCpuMs(server.pid),
    spawner: () => (spawner === null ? Number.NaN : processTreeCpuMs(spawner)),
    postgres: () => (db === "postgres" ? postgresCpuMs() : Number.NaN),
    machine: machineCpuMs,
  });
  const decided = await runLoad({ concurrency: 16, total: pool.length, task: (i) => approveOne(many, (pool[i] as TSuspended).approvalId) });
  const cpu = meter.per(pool.length);

  // The same round trip when the approved tool starts no process: what the engine alone sustains.
  const enginePool: TSuspended[] = [];
  await runLoad({ concurrency: 16, total: nMany, task: async () => void enginePool.push(await suspendOne(many, ENGINE_SCRIPT)) });
  const engineMeter = cpuMeter({ server: () => processCpuMs(server.pid), postgres: () => (db === "postgres" ? postgresCpuMs() : Number.NaN), machine: machineCpuMs });
  const engine = await runLoad({ concurrency: 16, total: enginePool.length, task: (i) => approveOne(many, (enginePool[i] as TSuspended).approvalId) });
  const engineCpu = engineMeter.per(enginePool.length);
  const engineMs: number[] = [];
  for (let i = 0; i < size(ctx, 200, 10); i++) await timed((await suspendOne(one, ENGINE_SCRIPT)).approvalId, engineMs);
  // What the round trip without the exec's own time is made of, in one alternating series (the
  // server waited for the command, idle, before its final commit): the engine-only round trip after
  // a pause as long as the exec's wait, once following an engine-only round trip and once following
  // an approved command's round trip, and that command's round trip itself.
  const idle = { n: size(ctx, 100, 5), ms: Math.round(percentile(execs.waitMs, 50)) };
  const afterIdle = { engine: [] as number[], afterCommand: [] as number[], roundTrip: [] as number[] };
  const idleLogFrom = server.proc.output().length;
  for (let i = 0; i < idle.n; i++) {
    const previous = await suspendOne(one, ENGINE_SCRIPT);
    const engine = await suspendOne(one, ENGINE_SCRIPT);
    const command = await suspendOne(one);
    const afterCommand = await suspendOne(one, ENGINE_SCRIPT);
    await approveOne(one, previous.approvalId);
    await sleep(idle.ms);
    await timed(engine.approvalId, afterIdle.engine);
    await timed(command.approvalId, afterIdle.roundTrip);
    await sleep(idle.ms);
    await timed(afterCommand.approvalId, afterIdle.afterCommand);
  }
  const idleExecs = await execTimingsAfter(server.proc.output, idleLogFrom, idle.n);
  const roundTripAfterIdleP50 = p50LessTheWait(afterIdle.roundTrip, idleExecs.waitMs);
  one.close();
  many.close();

  const base = new Client(bare.url);
  type TDecideLimit = { p50: number; p99: number; perSecond: number; concurrentP99: number };
  type TLimits = { decide: TDecideLimit; suspend: { p50: number; p99: number }; decidePrepared: TDecideLimit | null; decideAfterIdle: { p50: number } };
  const limits = await base.json<TLimits>("POST", "/raw-limits", { single: nSingle, concurrent: nMany, concurrency: 16, idle });
  base.close();
  const limit = limits.decide;
  const limitSuspend = limits.suspend;
  const nFork = size(ctx, 200, 10);
  const fork = await forkMicro(nFork, server.rssKb() / 1024);
  const sandbox = await sandboxCost(nFork);
  const cores = cpus().length;
  // No server can approve faster than the machine runs the approved command: the sandbox's CPU alone bounds the throughput.
  const sandboxCeiling = (cores * 1000) / sandbox.session.cpuMs;

  const bench = "1 approval round trip";
  const rows: TRow[] = [
    { bench, db, measure: "p50, 1 client", value: percentile(roundTripMs, 50), unit: "ms", limit: limit.p50, limitLabel: "raw decide p50" },
    { bench, db, measure: "p50, 1 client, without the exec's own time (round trip − the server's wait for it)", value: withoutExecP50, unit: "ms", limit: limit.p50, limitLabel: "raw decide p50", target: { kind: "maxRatio", x: 10 } },
    ...(limits.decidePrepared
      ? [
          { bench, db, measure: "the same, beside the raw decide with its statements prepared as the app's are (db/pglite-statements.ts; not the limit: PGlite's own query is)", value: withoutExecP50, unit: "ms", limit: limits.decidePrepared.p50, limitLabel: "raw decide p50, prepared" },
          { bench, db, measure: "engine only p50, beside the raw decide with its statements prepared", value: percentile(engineMs, 50), unit: "ms", limit: limits.decidePrepared.p50, limitLabel: "raw decide p50, prepared" },
        ]
      : []),
    { bench, db, measure: `the same, beside the raw decide measured the same way after an idle wait of ${idle.ms} ms before each (the exec's wait p50; not the limit)`, value: withoutExecP50, unit: "ms", limit: limits.decideAfterIdle.p50, limitLabel: "raw decide p50 after the idle wait" },
    { bench, db, measure: `engine only p50, each round trip after the same idle wait (${idle.ms} ms) following an engine-only round trip: the machine's cost of waking, with no process run`, value: percentile(afterIdle.engine, 50), unit: "ms", limit: limit.p50, limitLabel: "raw decide p50" },
    { bench, db, measure: "engine only p50, each after the same idle wait following an approved command's round trip (a command has just run, as before the round trip's own final commit)", value: percentile(afterIdle.afterCommand, 50), unit: "ms", limit: limit.p50, limitLabel: "raw decide p50" },
    { bench, db, measure: "that command's round trip without the exec's own time, in the same alternating series (beside the two rows above; the target row is the sequential one)", value: roundTripAfterIdleP50, unit: "ms", limit: limit.p50, limitLabel: "raw decide p50" },
    { bench, db, measure: "p99, 1 client", value: percentile(roundTripMs, 99), unit: "ms", limit: limit.p99, limitLabel: "raw decide p99" },
    { bench, db, measure: "throughput, 16 sessions", value: decided.perSecond, unit: "/s", limit: limit.perSecond, limitLabel: "raw decide, 16 callers", target: { kind: "minRatio", x: 0.1 } },
    { bench, db, measure: "CPU per round trip at 16 sessions: the server process", value: cpu.server, unit: "ms" },
    { bench, db, measure: "CPU per round trip at 16 sessions: the spawner and the commands it ran", value: cpu.spawner, unit: "ms" },
    ...(db === "postgres" ? [{ bench, db, measure: "CPU per round trip at 16 sessions: PostgreSQL", value: cpu.postgres, unit: "ms" }] : []),
    { bench, db, measure: `CPU per round trip at 16 sessions: the whole machine (${cores} cores; the kernel's own threads included)`, value: cpu.machine, unit: "ms" },
    { bench, db, measure: `sandbox: the machine's CPU per approved \`true\` (${sandbox.mode}, one sandbox per session: the default; ${nFork} × 2, through a spawner)`, value: sandbox.session.cpuMs, unit: "ms", limit: sandbox.plain.cpuMs, limitLabel: "the same unconfined", target: { kind: "maxRatio", x: 2 } },
    { bench, db, measure: "sandbox: wall time per approved `true`, p50 (one sandbox per session)", value: sandbox.session.wallMs, unit: "ms", limit: sandbox.plain.wallMs, limitLabel: "the same unconfined", target: { kind: "maxRatio", x: 2 } },
    { bench, db, measure: `sandbox: the machine's CPU per approved \`true\`, one sandbox per command (COUNTERSIGN_EXEC_SANDBOX_SCOPE=command)`, value: sandbox.command.cpuMs, unit: "ms", limit: sandbox.plain.cpuMs, limitLabel: "the same unconfined" },
    { bench, db, measure: "sandbox: wall time per approved `true`, p50, one sandbox per command", value: sandbox.command.wallMs, unit: "ms", limit: sandbox.plain.wallMs, limitLabel: "the same unconfined" },
    { bench, db, measure: "sandbox: a session's second command, which starts the session's sandbox (its first runs in one of its own): the machine's CPU", value: sandbox.first.cpuMs, unit: "ms", limit: sandbox.plain.cpuMs, limitLabel: "the same unconfined" },
    { bench, db, measure: "sandbox: a session's second command: wall time p50", value: sandbox.first.wallMs, unit: "ms", limit: sandbox.plain.wallMs, limitLabel: "the same unconfined" },
    { bench, db, measure: `throughput ceiling from the sandbox alone (${cores} cores ÷ its CPU per exec; a server costing nothing)`, value: sandboxCeiling, unit: "/s", limit: limit.perSecond, limitLabel: "raw decide, 16 callers" },
    { bench, db, measure: "engine only (the approved tool is `echo`: no process, no sandbox): p50, 1 client", value: percentile(engineMs, 50), unit: "ms", limit: limit.p50, limitLabel: "raw decide p50" },
    { bench, db, measure: "engine only: throughput, 16 sessions", value: engine.perSecond, unit: "/s", limit: limit.perSecond, limitLabel: "raw decide, 16 callers" },
    { bench, db, measure: "engine only: CPU per round trip at 16 sessions: the server process", value: engineCpu.server, unit: "ms" },
    ...(db === "postgres" ? [{ bench, db, measure: "engine only: CPU per round trip at 16 sessions: PostgreSQL", value: engineCpu.postgres, unit: "ms" }] : []),
    { bench, db, measure: "engine only: CPU per round trip at 16 sessions: the whole machine", value: engineCpu.machine, unit: "ms" },
    { bench, db, measure: "p99 at 16 sessions", value: percentile(decided.latencies, 99), unit: "ms", limit: limit.concurrentP99, limitLabel: "raw decide p99, 16 callers" },
    { bench, db, measure: "deny p50 (HTTP + auth + decide commit, no resume)", value: percentile(denyMs, 50), unit: "ms", limit: limit.p50, limitLabel: "raw decide p50" },
    { bench, db, measure: `inside it: exec \`true\` spawn → exit p50 (in the spawner; ${execs.spawnToExitMs.length} execs)`, value: percentile(execs.spawnToExitMs, 50), unit: "ms" },
    { bench, db, measure: "inside it: exec `true` as the server waits for it (request to the spawner → result) p50", value: percentile(execs.waitMs, 50), unit: "ms" },
    { bench, db, measure: `fork micro: ${nFork} × \`true\` forked by a ${fork.rssMb} MB process (grown to at least the server's VmRSS; as before the spawner), p50`, value: fork.here.wall, unit: "ms" },
    { bench, db, measure: `fork micro: the same through the spawner (runCommand), p50`, value: fork.spawner.wall, unit: "ms", limit: fork.here.wall, limitLabel: "forked by the caller" },
    { bench, db, measure: "fork micro: caller's event loop blocked per exec, forked by the caller, p50", value: fork.here.blocked, unit: "ms" },
    { bench, db, measure: "fork micro: caller's event loop blocked per exec, through the spawner, p50", value: fork.spawner.blocked, unit: "ms", limit: fork.here.blocked, limitLabel: "forked by the caller" },
    { bench, db, measure: "server VmRSS after this benchmark", value: server.rssKb() / 1024, unit: "MB" },
    { bench: "2 suspend", db, measure: "p50, 1 client", value: percentile(suspendMs, 50), unit: "ms", limit: limitSuspend.p50, limitLabel: "raw create+suspend commits p50" },
    { bench: "2 suspend", db, measure: "p99, 1 client", value: percentile(suspendMs, 99), unit: "ms", limit: limitSuspend.p99, limitLabel: "raw create+suspend commits p99" },
    { bench: "2 suspend", db, measure: "throughput, 16 clients", value: created.perSecond, unit: "/s" },
  ];
  return { rows, completed: single };
}
