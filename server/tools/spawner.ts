import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { signalGroup } from "./proc.mjs";

/**
 * The long-lived sandbox of a session (server/tools/exec-sandbox.ts, scope `session`): `key` names
 * it (the workspace and the network setting), `file`/`args`/`cwd` start it (bubblewrap around the
 * spawner's own script as the sandbox's agent), `command` is what that agent forks, and it ends
 * after `idleMs` with no command. The spawner starts it for the key's second command within
 * `idleMs`; until then the request's own plan (a sandbox per command) runs.
 */
export type TSessionSandboxPlan = { key: string; file: string; args: string[]; cwd: string; idleMs: number; command: { file: string; args: string[]; cwd: string } };

/** One command for the spawner: a ready spawn plan plus the bounds the spawner enforces. */
export type TSpawnRequest = {
  file: string;
  args: string[];
  cwd: string;
  /** The command's whole environment (nothing of the spawner's or the server's is added). */
  env: Record<string, string>;
  uid?: number;
  gid?: number;
  /**
   * The command runs in its own PID namespace (bubblewrap `--unshare-pid --info-fd 3`): when the
   * forked process exits by itself and the namespace's init (whose pid bubblewrap writes to fd 3)
   * is gone, nothing of the tree is left and its group needs no reap scan.
   */
  pidNamespace?: boolean;
  /** The session's long-lived sandbox, used instead of this plan once the session runs a second command. */
  sandbox?: TSessionSandboxPlan;
  timeoutMs: number;
  /** Per stream; the spawner forwards no more than this and flags the rest as truncated. */
  maxOutputBytes: number;
};

/** How one command ended, as the spawner reported it. */
export type TSpawnOutcome = {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  truncated: boolean;
  /** The fork's own time: spawn() to the command's exit, measured in the process that forked; null when it never started. */
  spawnToExitMs: number | null;
  /** Why the command could not start (e.g. ENOENT); null when it started. */
  startError: string | null;
  /**
   * Nothing of the command's tree is left anywhere: it ran in its own PID namespace and ended by
   * itself, so the kernel ended the namespace with it. False: leftovers are possible (the caller's
   * marker scan looks for processes that left the group).
   */
  treeEnded: boolean;
  stdout: Buffer;
  stderr: Buffer;
};

/**
 * A started command: its outcome, and how to stop its whole process group early. `cancel()` returns
 * true when the command had not exited yet as far as this process has seen (it was cancelled).
 */
export type TSpawnJob = { done: Promise<TSpawnOutcome>; cancel: () => boolean };

/**
 * The long-lived process that starts commands for this one (`spawner-process.mjs`). Started once
 * per server (or device) process by {@link startSpawner}, restarted when it dies, stopped with it.
 */
export type TSpawner = {
  /** Starts a command; `done` rejects with {@link SpawnerUnavailableError} when the spawner cannot run it or dies meanwhile. */
  /** `onSpawn` gets the command's process group (its leader's pid), or null inside a session sandbox (its pids count in the sandbox's PID namespace). */
  run: (request: TSpawnRequest, onSpawn?: (pid: number | null) => void) => TSpawnJob;
  /** The spawner's pid, or null while none runs. */
  pid: () => number | null;
  /** Stops the spawner (it stops every command still running); later runs are refused. */
  stop: () => Promise<void>;
};

/** The spawner could not start, or stopped while a command ran: that command's outcome is unknown. */
export class SpawnerUnavailableError extends Error {
  readonly code = "spawner_unavailable";
  constructor(message: string) {
    super(message);
    this.name = "SpawnerUnavailableError";
  }
}

type TLog = { debug: (obj: object, msg: string) => void; warn: (obj: object, msg: string) => void };
type TExit = Pick<TSpawnOutcome, "exitCode" | "signal" | "spawnToExitMs">;
type TPending = {
  /** The spawner process this command was sent to. */
  owner: ChildProcess;
  pid: number | null;
  exit: TExit | null;
  out: Buffer[];
  err: Buffer[];
  sentAt: number;
  resolve: (o: TSpawnOutcome) => void;
  reject: (e: Error) => void;
  onSpawn?: (pid: number | null) => void;
};
type TMessage =
  | { type: "ready" }
  | { type: "spawned"; id: string; pid: number | null }
  | { type: "output"; id: string; stream: "stdout" | "stderr"; chunk: Uint8Array }
  | ({ type: "exited"; id: string } & TExit)
  | ({ type: "done"; id: string } & Pick<TSpawnOutcome, "timedOut" | "truncated" | "startError" | "treeEnded">);

const SCRIPT = fileURLToPath(new URL("./spawner-process.mjs", import.meta.url));
/** How long a fresh spawner may take to say it is ready at boot: Node starts in well under a second, a loaded machine may take seconds. */
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5000;
const toBuffer = (chunk: Uint8Array) => Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);

/**
 * Starts the spawner and resolves once it is ready; rejects with a sentence when it cannot start.
 * `log` gets one debug line per finished command (`spawnToExitMs`, `waitMs`) and a warning when
 * the spawner dies unexpectedly.
 */
export async function startSpawner(options: { log?: TLog } = {}): Promise<TSpawner> {
  const pending = new Map<string, TPending>();
  let child: ChildProcess | null = null;
  let stopping = false;
  let seq = 0;

  const fail = (why: string) => new SpawnerUnavailableError(`The command spawner process ${why}; no command was run.`);

  /** Pending commands keep this process alive (like their pipes did); an idle spawner never does. */
  const holdOpen = (c: ChildProcess) => (pending.size > 0 ? c.channel?.ref() : c.channel?.unref());

  /** Forks a spawner; `ready` settles when it says so, or rejects when it exits first. */
  const launch = (): { c: ChildProcess; ready: Promise<void> } => {
    // No loader flags (execArgv), no server environment (its secrets), not in the server's process
    // group (a Ctrl-C there must not kill it before the server has stopped its commands).
    const c = fork(SCRIPT, [], { execArgv: [], env: {} as NodeJS.ProcessEnv, cwd: "/", serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"], detached: true });
    c.unref();
    let ready = false;
    let readyWith = (_error?: Error) => {};
    const readyPromise = new Promise<void>((resolve, reject) => {
      readyWith = (error) => (error ? reject(error) : resolve());
    });
    readyPromise.catch(() => {}); // only boot awaits it
    c.on("message", (m: TMessage) => {
      if (m.type === "ready") {
        ready = true;
        return readyWith();
      }
      const p = pending.get(m.id);
      if (!p) return;
      if (m.type === "spawned") {
        p.pid = m.pid;
        try {
          p.onSpawn?.(m.pid);
        } catch {
          // A faulty observer must not leave an unmanaged process tree behind.
        }
      } else if (m.type === "output") (m.stream === "stdout" ? p.out : p.err).push(toBuffer(m.chunk));
      else if (m.type === "exited") p.exit = { exitCode: m.exitCode, signal: m.signal, spawnToExitMs: m.spawnToExitMs };
      else if (m.type === "done") {
        pending.delete(m.id);
        holdOpen(c);
        const exit = p.exit ?? { exitCode: null, signal: null, spawnToExitMs: null };
        const waitMs = performance.now() - p.sentAt;
        p.resolve({ ...exit, timedOut: m.timedOut, truncated: m.truncated, startError: m.startError, treeEnded: m.treeEnded === true, stdout: Buffer.concat(p.out), stderr: Buffer.concat(p.err) });
        // Written once the caller has gone on with the outcome: the line measures the wait, and
        // writing it (synchronously, to stdout) must not add to the round trip it is read beside.
        const log = options.log;
        if (log) setImmediate(() => log.debug({ pid: p.pid, exitCode: exit.exitCode, spawnToExitMs: exit.spawnToExitMs, waitMs }, "command finished"));
      }
    });
    c.on("error", () => {}); // a failed fork also emits 'exit'; send errors reach the send callback
    c.on("exit", (code, signal) => {
      if (child === c) child = null;
      const how = signal ? `was killed (${signal})` : `exited (code ${code})`;
      readyWith(fail(`${how} while starting`));
      if (!stopping) options.log?.warn({ pid: c.pid, code, signal }, `the command spawner process ${how}; it is restarted for the next command`);
      for (const [id, p] of pending) {
        if (p.owner !== c) continue;
        // Nothing can stop this command any more but us: kill its group rather than leave it running.
        if (p.pid !== null) signalGroup(p.pid, "SIGKILL");
        pending.delete(id);
        if (!ready) p.reject(fail(`${how} while starting`));
        else if (stopping) p.reject(new SpawnerUnavailableError("The server is stopping: the command was stopped before it finished."));
        else p.reject(new SpawnerUnavailableError(`The command spawner process ${how} while the command ran: the command was stopped and its outcome is unknown.`));
      }
      // Restarted right away if it had been working (so the next command pays no start-up); one that
      // never became ready is retried only when the next command asks, never in a loop.
      if (ready && !stopping && child === null) child = launch().c;
    });
    return { c, ready: readyPromise };
  };

  const ensure = (): ChildProcess => {
    if (stopping) throw new SpawnerUnavailableError("The server is stopping; no new command starts.");
    if (child === null || child.exitCode !== null || child.signalCode !== null) {
      try {
        child = launch().c;
      } catch (error) {
        throw fail(`could not be started (${error instanceof Error ? error.message : String(error)})`);
      }
    }
    return child;
  };

  const first = launch();
  child = first.c;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(fail(`did not start within ${READY_TIMEOUT_MS / 1000} s`)), READY_TIMEOUT_MS);
  });
  try {
    await Promise.race([first.ready, late]);
  } catch (error) {
    stopping = true;
    first.c.kill("SIGKILL");
    throw error;
  } finally {
    clearTimeout(timer);
  }
  holdOpen(first.c);

  return {
    run: (request, onSpawn) => {
      const id = String(++seq);
      const done = new Promise<TSpawnOutcome>((resolve, reject) => {
        const c = ensure();
        pending.set(id, { owner: c, pid: null, exit: null, out: [], err: [], sentAt: performance.now(), resolve, reject, onSpawn });
        holdOpen(c);
        c.send({ type: "run", id, ...request }, (error) => {
          if (!error || !pending.has(id)) return;
          pending.delete(id);
          reject(fail(`could not be reached (${error.message})`));
        });
      });
      const cancel = () => {
        const p = pending.get(id);
        if (!p || p.exit !== null) return false;
        if (p.owner.connected) p.owner.send({ type: "cancel", id }, () => {});
        return true;
      };
      return { done, cancel };
    },
    pid: () => child?.pid ?? null,
    stop: async () => {
      stopping = true;
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((r) => c.once("exit", r));
      // Closing the channel tells it to stop its commands and exit; SIGKILL if it does not.
      if (c.connected) c.disconnect();
      const timer = setTimeout(() => c.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
