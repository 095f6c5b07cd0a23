import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import type { Readable } from "node:stream";
import { execEnvironment, spawnPlan, type TConfinement } from "./exec-sandbox";

/** Input for {@link runCommand}. */
export type TRunCommandInput = {
  command: string; // run with /bin/bash -c
  cwd: string; // must already exist
  timeoutMs: number; // then the whole process tree is killed
  maxOutputBytes?: number; // per stream, default 65536
  signal?: AbortSignal; // abort kills the tree; if already aborted, nothing is spawned
  /** The command's whole environment; default the minimal one (execEnvironment): nothing of the server's own is added. */
  env?: Record<string, string>;
  /** Runs the command inside the sandbox (server/tools/exec-sandbox.ts); absent: a plain child process (device hosts, tests). */
  confinement?: TConfinement;
  /** The env marker the whole tree carries (minted by a cleanup owner, see server/devices/process-cleanup.ts); random when absent. */
  marker?: string;
  /** Called once spawned, with the pid and the env marker carried by the whole tree. */
  onSpawn?: (info: { pid: number; marker: string }) => void;
};

/** Outcome of {@link runCommand}; ordinary failures are reported here, never thrown. */
export type TRunCommandResult = {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  cancelled: boolean;
  truncated: boolean;
  signal: string | null;
  durationMs: number;
};

const MARKER_VAR = "COUNTERSIGN_PROCESS_MARKER";
const DEFAULT_MAX_OUTPUT_BYTES = 65536;
const KILL_GRACE_MS = 500;
const PIPE_GRACE_MS = 200;
const POLL_MS = 25;
const HAS_PROC = existsSync("/proc/self/stat");

/** Keeps the first `limit` bytes of a stream but consumes all of it, so the writer never blocks. */
function collect(stream: Readable, limit: number): { text: () => string; truncated: () => boolean } {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  stream.on("data", (chunk: Buffer) => {
    const room = limit - size;
    if (chunk.length > room) truncated = true;
    if (room <= 0) return;
    const kept = chunk.subarray(0, room);
    chunks.push(kept);
    size += kept.length;
  });
  // A destroyed pipe may still emit errors (EPIPE etc.); output collected so far stands.
  stream.on("error", () => {});
  return {
    // stream:true drops a trailing partial UTF-8 sequence left by truncation instead of emitting U+FFFD.
    text: () => new TextDecoder("utf-8").decode(Buffer.concat(chunks), { stream: true }),
    truncated: () => truncated,
  };
}

/** Calls `test` with the contents of /proc/<pid>/<file> for each readable process; stops when it returns true. */
function scanProc(file: string, test: (pid: number, content: string) => boolean): void {
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let content: string;
    try {
      content = readFileSync(`/proc/${entry}/${file}`, "latin1");
    } catch {
      continue; // Processes owned by others or exiting mid-scan are expected.
    }
    if (test(Number(entry), content)) return;
  }
}

/** True if any non-zombie process is in the group. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  if (!HAS_PROC) return true;
  // kill(0) also counts zombies, which can linger for seconds when PID 1 reaps orphans lazily.
  let alive = false;
  scanProc("stat", (_pid, stat) => {
    // comm may contain spaces or parens, so parse from the last ')': "state ppid pgrp ...".
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    alive = state !== "Z" && Number(pgrp) === pgid;
    return alive;
  });
  return alive;
}

function signalGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    // The group may already be gone; that is the goal anyway.
  }
}

/** Runs `command` with /bin/bash -c in its own process group; kills the whole tree on timeout or abort. */
export async function runCommand(input: TRunCommandInput): Promise<TRunCommandResult> {
  const started = Date.now();
  const limit = input.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const base: TRunCommandResult = {
    exitCode: null,
    stdout: "",
    stderr: "",
    timedOut: false,
    cancelled: false,
    truncated: false,
    signal: null,
    durationMs: 0,
  };

  if (input.signal?.aborted) {
    return { ...base, cancelled: true, durationMs: Date.now() - started };
  }
  let cwdIsDir = false;
  try {
    cwdIsDir = statSync(input.cwd).isDirectory();
  } catch {}
  if (!cwdIsDir) {
    return { ...base, stderr: "The working directory does not exist.", durationMs: Date.now() - started };
  }

  const marker = input.marker ?? randomBytes(16).toString("hex");
  const environment: Record<string, string> = { ...(input.env ?? execEnvironment(input.cwd)), [MARKER_VAR]: marker };
  const plan = input.confinement ? spawnPlan(input.confinement, input.command, input.cwd) : { file: "/bin/bash", args: ["-c", input.command], cwd: input.cwd };
  const child = spawn(plan.file, plan.args, {
    cwd: plan.cwd,
    // Exactly this environment (Next's typings make NODE_ENV look required in ProcessEnv).
    env: environment as NodeJS.ProcessEnv,
    ...(plan.uid !== undefined ? { uid: plan.uid, gid: plan.gid } : {}),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });

  return new Promise<TRunCommandResult>((resolve) => {
    const result: TRunCommandResult = { ...base };
    const out = collect(child.stdout, limit);
    const err = collect(child.stderr, limit);
    const pgid = child.pid;
    let exited = false;
    let finishing = false;
    let termSent = false;
    let killSent = false;
    const timers: NodeJS.Timeout[] = [];

    const terminate = () => {
      if (pgid === undefined || termSent) return;
      termSent = true;
      signalGroup(pgid, "SIGTERM");
      timers.push(
        setTimeout(() => {
          if (groupAlive(pgid)) signalGroup(pgid, "SIGKILL");
          killSent = true;
        }, KILL_GRACE_MS),
      );
    };
    const onAbort = () => {
      if (exited) return;
      result.cancelled = true;
      terminate();
    };

    const finish = async (spawnError?: Error) => {
      if (finishing) return;
      finishing = true;
      input.signal?.removeEventListener("abort", onAbort);
      if (pgid !== undefined) {
        // Background processes outlive bash; the command owns its whole group, so reap leftovers.
        if (groupAlive(pgid)) terminate();
        while (groupAlive(pgid) && !killSent) {
          await new Promise((r) => setTimeout(r, POLL_MS));
        }
      }
      for (const t of timers) clearTimeout(t);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({
        ...result,
        stdout: out.text(),
        stderr: spawnError ? `failed to start: ${spawnError.message}` : err.text(),
        truncated: out.truncated() || err.truncated(),
        durationMs: Date.now() - started,
      });
    };

    child.on("error", (error) => {
      // Only spawn failures end the run; later errors (e.g. from kill) are irrelevant here.
      if (pgid === undefined) void finish(error);
    });
    if (pgid === undefined) return;

    input.signal?.addEventListener("abort", onAbort, { once: true });
    timers.push(
      setTimeout(() => {
        if (exited) return;
        result.timedOut = true;
        terminate();
      }, input.timeoutMs),
    );

    child.on("exit", (code, sig) => {
      exited = true;
      result.exitCode = code;
      result.signal = sig;
      // Grandchildren may keep the pipes open indefinitely; 'close' would then never fire.
      timers.push(setTimeout(() => void finish(), PIPE_GRACE_MS));
    });
    child.on("close", () => void finish());

    try {
      input.onSpawn?.({ pid: pgid, marker });
    } catch {
      // A faulty observer must not leave an unmanaged process tree behind.
    }
  });
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
