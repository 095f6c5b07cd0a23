import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { prepareWorkspace, secureDataDir } from "../../server/host/workspace";
import { detectExecSandbox, execEnvironment } from "../../server/tools/exec-sandbox";
import { runCommand } from "../../server/tools/run-command";
import { startSpawner } from "../../server/tools/spawner";
import { machineCpuMs } from "./lib/cpu";
import { now, percentile, sleep } from "./lib/stats";

/** The timings the server logged for each exec it ran (debug line "command finished", server/tools/spawner.ts). */
export type TExecTimings = { spawnToExitMs: number[]; waitMs: number[] };

/**
 * The timings of the `count` commands the server ran after `from` in its output (it runs with
 * LOG_LEVEL=debug). It writes each line once the command's caller has gone on, so the last may
 * still be on its way: waited for, at most 5 s (then fewer are returned, and the caller says so).
 */
export async function execTimingsAfter(output: () => string, from: number, count: number): Promise<TExecTimings> {
  for (const deadline = Date.now() + 5000; ; await sleep(20)) {
    const timings = execTimings(output().slice(from));
    if (timings.waitMs.length >= count || Date.now() > deadline) return timings;
  }
}

/** Reads the server's "command finished" lines from a slice of its output. */
function execTimings(output: string): TExecTimings {
  const out: TExecTimings = { spawnToExitMs: [], waitMs: [] };
  for (const line of output.split("\n")) {
    if (!line.includes('"msg":"command finished"')) continue;
    const entry = JSON.parse(line) as { spawnToExitMs: number | null; waitMs: number };
    if (entry.spawnToExitMs !== null) out.spawnToExitMs.push(entry.spawnToExitMs);
    out.waitMs.push(entry.waitMs);
  }
  return out;
}

/** The same minimal environment both ways. */
const ENV: Record<string, string> = { PATH: "/usr/bin:/bin" };

/** One `bash -c true` forked by this process, as the server did before the spawner: [wall ms, event loop blocked ms]. */
async function forkHere(): Promise<[number, number]> {
  const t0 = now();
  const child = spawn("/bin/bash", ["-c", "true"], { cwd: tmpdir(), env: ENV as NodeJS.ProcessEnv, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const blocked = now() - t0;
  child.stdout.resume();
  child.stderr.resume();
  await new Promise((resolve) => child.on("close", resolve));
  return [now() - t0, blocked];
}

/** The same command through a spawner (runCommand, the only path the server has): [wall ms, event loop blocked ms]. */
async function forkViaSpawner(spawner: Awaited<ReturnType<typeof startSpawner>>): Promise<[number, number]> {
  const t0 = now();
  const pending = runCommand({ command: "true", cwd: tmpdir(), env: ENV, timeoutMs: 10_000, spawner });
  const blocked = now() - t0;
  await pending;
  return [now() - t0, blocked];
}

/**
 * `n` spawns of `true` each way, alternating so load changes hit both alike: forked by this
 * process, first grown to at least `asLargeAsMb` resident (the server's VmRSS: a fork's cost grows with the
 * forking process's resident memory), and through a spawner started from it. Wall time: call to
 * result; blocked: the synchronous part of the call (the fork itself when this process forks).
 */
export async function forkMicro(n: number, asLargeAsMb: number): Promise<{ rssMb: number; here: { wall: number; blocked: number }; spawner: { wall: number; blocked: number } }> {
  const spawner = await startSpawner();
  // Filled, so every page is resident, like the server's heap and PGlite's WASM memory.
  const pad = Buffer.alloc(Math.max(0, Math.round(asLargeAsMb * 2 ** 20 - process.memoryUsage().rss)), 1);
  const rssMb = Math.round(process.memoryUsage().rss / 2 ** 20);
  const here: [number, number][] = [];
  const via: [number, number][] = [];
  try {
    for (let i = 0; i < 5; i++) await Promise.all([forkHere(), forkViaSpawner(spawner)]);
    for (let i = 0; i < n; i++) {
      here.push(await forkHere());
      via.push(await forkViaSpawner(spawner));
    }
  } finally {
    await spawner.stop();
    if (pad.length > 0) pad[0] = 0; // keeps the padding alive until here
  }
  const p50 = (xs: [number, number][], i: 0 | 1) => percentile(xs.map((x) => x[i]), 50);
  return {
    rssMb,
    here: { wall: p50(here, 0), blocked: p50(here, 1) },
    spawner: { wall: p50(via, 0), blocked: p50(via, 1) },
  };
}

type TCost = { cpuMs: number; wallMs: number };

/**
 * What one approved `true` costs the machine in the sandbox the server picks here (`auto`: bubblewrap
 * when it runs), against the same command unconfined, all through a spawner, `n` each, series
 * alternating: the machine's CPU time per exec (every process and the kernel's own threads:
 * namespaces are set up and torn down in the kernel) and the wall time p50. Bubblewrap is measured
 * both ways: one sandbox per session (the default: from a session's second command on, its commands
 * start inside it) and one per command; `first` is a session's second command, which starts the
 * session's sandbox (its first runs in a sandbox of its own, as with one per command).
 */
export async function sandboxCost(n: number): Promise<{ mode: string; session: TCost; command: TCost; first: TCost; plain: TCost }> {
  const session = detectExecSandbox(undefined, undefined);
  const perCommand = detectExecSandbox(undefined, undefined, undefined, { scope: "command", idleMs: 1 });
  const spawner = await startSpawner();
  const dataDir = mkdtempSync(join(tmpdir(), "countersign-bench-sandbox-"));
  try {
    secureDataDir(dataDir);
    const workspace = prepareWorkspace(join(dataDir, "workspaces", "bench"), session);
    const env = execEnvironment(workspace);
    const one = async (sandbox: typeof session | null, dir = workspace) => {
      const r = await runCommand({ command: "true", cwd: dir, env, timeoutMs: 10_000, spawner, ...(sandbox ? { confinement: { sandbox, workspaceDir: dir, network: false } } : {}) });
      if (r.exitCode !== 0) throw new Error(`sandbox bench: true exited ${r.exitCode}: ${r.stderr}`);
    };
    const series = async (count: number, run: (i: number) => Promise<void>): Promise<TCost> => {
      const wall: number[] = [];
      const cpu0 = machineCpuMs();
      for (let i = 0; i < count; i++) {
        const t0 = now();
        await run(i);
        wall.push(now() - t0);
      }
      return { cpuMs: (machineCpuMs() - cpu0) / count, wallMs: percentile(wall, 50) };
    };
    for (let i = 0; i < 5; i++) await Promise.all([one(session), one(perCommand), one(null)]);
    const runs = { session: [] as TCost[], command: [] as TCost[], plain: [] as TCost[] };
    for (let round = 0; round < 2; round++) {
      runs.session.push(await series(n, () => one(session)));
      runs.command.push(await series(n, () => one(perCommand)));
      runs.plain.push(await series(n, () => one(null)));
    }
    // A session's second command, which starts the session's sandbox (its first ran in one of its own):
    // a fresh workspace each time.
    const starts = Math.max(3, Math.round(n / 10));
    const wall: number[] = [];
    let cpu = 0;
    for (let i = 0; i < starts; i++) {
      const fresh = prepareWorkspace(join(dataDir, "workspaces", `start-${i}`), session);
      await one(session, fresh);
      const [t0, cpu0] = [now(), machineCpuMs()];
      await one(session, fresh);
      wall.push(now() - t0);
      cpu += machineCpuMs() - cpu0;
    }
    const first = { cpuMs: cpu / starts, wallMs: percentile(wall, 50) };
    const mean = (xs: TCost[]) => ({ cpuMs: xs.reduce((a, x) => a + x.cpuMs, 0) / xs.length, wallMs: xs.reduce((a, x) => a + x.wallMs, 0) / xs.length });
    return { mode: session.mode, session: mean(runs.session), command: mean(runs.command), first, plain: mean(runs.plain) };
  } finally {
    await spawner.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
