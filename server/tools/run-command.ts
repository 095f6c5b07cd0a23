import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { execEnvironment, spawnPlan, type TConfinement } from "./exec-sandbox";
import { scanProc } from "./proc.mjs";
import type { TSpawner } from "./spawner";

/** Input for {@link runCommand}. */
export type TRunCommandInput = {
  command: string; // run with /bin/bash -c
  cwd: string; // must already exist
  timeoutMs: number; // then the whole process tree is killed
  /** The process that forks the command (server/tools/spawner.ts): one per server or device process. */
  spawner: TSpawner;
  maxOutputBytes?: number; // per stream, default 65536
  signal?: AbortSignal; // abort kills the tree; if already aborted, nothing is spawned
  /** The command's whole environment; default the minimal one (execEnvironment): nothing of the server's own is added. */
  env?: Record<string, string>;
  /** Runs the command inside the sandbox (server/tools/exec-sandbox.ts); absent: a plain child process (device hosts, tests). */
  confinement?: TConfinement;
  /** The env marker the whole tree carries (minted by a cleanup owner, see server/tools/process-cleanup.ts); random when absent. */
  marker?: string;
  /** Called once spawned, with the process group's pid (null inside a session sandbox) and the env marker carried by the whole tree. */
  onSpawn?: (info: { pid: number | null; marker: string }) => void;
};

/** Outcome of {@link runCommand}; ordinary failures (exit codes, timeouts, a failed start) are reported here. */
export type TRunCommandResult = {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  cancelled: boolean;
  truncated: boolean;
  signal: string | null;
  /** The caller's whole wait, from the call to the result. */
  durationMs: number;
  /** The fork's own time: spawn() to the command's exit, in the spawner; null when nothing was spawned. */
  spawnToExitMs: number | null;
  /** The command's PID namespace ended with it: nothing of its tree is left (see TSpawnOutcome). */
  treeEnded: boolean;
};

const MARKER_VAR = "COUNTERSIGN_PROCESS_MARKER";
const DEFAULT_MAX_OUTPUT_BYTES = 65536;

// stream:true drops a trailing partial UTF-8 sequence left by truncation instead of emitting U+FFFD.
const decode = (bytes: Buffer): string => new TextDecoder("utf-8").decode(bytes, { stream: true });

/**
 * Runs `command` with /bin/bash -c in its own process group, started by the spawner process
 * (server/tools/spawner.ts), which kills the whole tree on timeout or abort. Throws
 * {@link SpawnerUnavailableError} when the spawner cannot run it or dies while it runs.
 */
export async function runCommand(input: TRunCommandInput): Promise<TRunCommandResult> {
  const started = performance.now();
  const base: TRunCommandResult = {
    exitCode: null,
    stdout: "",
    stderr: "",
    timedOut: false,
    cancelled: false,
    truncated: false,
    signal: null,
    durationMs: 0,
    spawnToExitMs: null,
    treeEnded: false,
  };
  const elapsed = () => performance.now() - started;

  if (input.signal?.aborted) return { ...base, cancelled: true, durationMs: elapsed() };
  let cwdIsDir = false;
  try {
    cwdIsDir = statSync(input.cwd).isDirectory();
  } catch {}
  if (!cwdIsDir) return { ...base, stderr: "The working directory does not exist.", durationMs: elapsed() };

  const marker = input.marker ?? randomBytes(16).toString("hex");
  const environment: Record<string, string> = { ...(input.env ?? execEnvironment(input.cwd)), [MARKER_VAR]: marker };
  const plan = input.confinement ? spawnPlan(input.confinement, input.command, input.cwd) : { file: "/bin/bash", args: ["-c", input.command], cwd: input.cwd };
  const job = input.spawner.run(
    { ...plan, env: environment, timeoutMs: input.timeoutMs, maxOutputBytes: input.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES },
    (pid) => input.onSpawn?.({ pid, marker }),
  );
  let cancelled = false;
  const onAbort = () => {
    // Cancelled when the abort came before the command exited, whoever's signal then stopped it.
    if (job.cancel()) cancelled = true;
  };
  input.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const outcome = await job.done;
    return {
      exitCode: outcome.exitCode,
      stdout: decode(outcome.stdout),
      stderr: outcome.startError !== null ? `failed to start: ${outcome.startError}` : decode(outcome.stderr),
      timedOut: outcome.timedOut,
      cancelled,
      truncated: outcome.truncated,
      signal: outcome.signal,
      durationMs: elapsed(),
      spawnToExitMs: outcome.spawnToExitMs,
      treeEnded: outcome.treeEnded,
    };
  } finally {
    input.signal?.removeEventListener("abort", onAbort);
  }
}

/** Pids of live processes whose environment carries `COUNTERSIGN_PROCESS_MARKER=<marker>` (Linux /proc). */
export function listMarkedProcesses(marker: string): number[] {
  const needle = `${MARKER_VAR}=${marker}`;
  const pids: number[] = [];
  scanProc("environ", (pid, environ) => {
    if (environ.split("\0").includes(needle)) pids.push(pid);
    return false;
  });
  return pids;
}
