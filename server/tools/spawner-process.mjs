/**
 * The command spawner: a small long-lived process that starts every command for the process that
 * forked it (server/tools/spawner.ts), so each fork copies this process's few megabytes instead of
 * the server's hundreds and never blocks the server's event loop.
 *
 * It decides nothing: the server sends a ready spawn plan (executable, arguments, working
 * directory, the command's whole environment, the exec user) built by the confinement code in
 * server/tools/exec-sandbox.ts. It owns each command's process group: bounded output, timeout,
 * cancel, and the reaping of whatever the command leaves behind. Plain JavaScript with node:
 * built-ins only, so it starts without a TypeScript loader.
 *
 * Messages in: {type:"run", id, file, args, cwd, env, uid?, gid?, pidNamespace?, timeoutMs, maxOutputBytes},
 * {type:"cancel", id}. Out: {type:"ready"}, {type:"spawned", id, pid}, {type:"output", id,
 * stream, chunk} (never more than maxOutputBytes per stream), {type:"exited", id, exitCode, signal,
 * spawnToExitMs} as soon as the command exits, {type:"done", id, timedOut, truncated, startError,
 * treeEnded} once its pipes are closed and its group is reaped (treeEnded: the command's PID
 * namespace ended with it, so nothing of its tree is left anywhere).
 */
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { groupAlive, signalGroup } from "./proc.mjs";

const KILL_GRACE_MS = 500;
const PIPE_GRACE_MS = 200;
const POLL_MS = 25;

/** Commands still running, by request id: how to cancel each, and its process group. */
const running = new Map();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function send(message) {
  // The server may be gone; the disconnect handler below then stops everything.
  if (process.connected) process.send(message, () => {});
}

function run(request) {
  const { id, file, args, cwd, env, uid, gid, pidNamespace, timeoutMs, maxOutputBytes } = request;
  const state = { timedOut: false, truncated: false, startError: null, treeEnded: false };
  const started = performance.now();
  let child;
  try {
    child = spawn(file, args, { cwd, env, ...(uid !== undefined ? { uid, gid } : {}), detached: true, stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    return send({ type: "done", id, ...state, startError: error.message });
  }
  const pgid = child.pid;
  let exited = false;
  /** The forked process ended by itself with an exit code (not a signal, not our terminate). */
  let exitedByItself = false;
  let finishing = false;
  let termSent = false;
  let killSent = false;
  const timers = [];

  // Keeps the first maxOutputBytes of each stream but consumes all of it, so the writer never blocks.
  const forward = (stream, name) => {
    let size = 0;
    stream.on("data", (chunk) => {
      const room = maxOutputBytes - size;
      if (chunk.length > room) state.truncated = true;
      if (room <= 0) return;
      const kept = chunk.subarray(0, room);
      size += kept.length;
      send({ type: "output", id, stream: name, chunk: kept });
    });
    // A destroyed pipe may still emit errors (EPIPE etc.); output forwarded so far stands.
    stream.on("error", () => {});
  };
  forward(child.stdout, "stdout");
  forward(child.stderr, "stderr");

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

  const finish = async (spawnError) => {
    if (finishing) return;
    finishing = true;
    // A command in its own PID namespace (bubblewrap --unshare-pid) that ended by itself leaves
    // nothing to reap: bubblewrap exits only after it has waited for the namespace's init, and the
    // kernel ends every other process of a namespace before its init can be waited for. Only the
    // namespace's processes and bubblewrap itself were in the group. A terminated or signalled
    // bubblewrap takes that path no more (--die-with-parent ends the namespace asynchronously), so
    // it is reaped like any other group.
    const nothingLeft = pidNamespace === true && exitedByItself && !termSent;
    state.treeEnded = nothingLeft;
    if (pgid !== undefined && !nothingLeft) {
      // Background processes outlive bash; the command owns its whole group, so reap leftovers.
      // One scan when nothing is left (the common case): a scan of /proc costs milliseconds under load.
      if (groupAlive(pgid)) {
        terminate();
        do await sleep(POLL_MS);
        while (groupAlive(pgid) && !killSent);
      }
    }
    running.delete(id);
    for (const t of timers) clearTimeout(t);
    child.stdout.destroy();
    child.stderr.destroy();
    send({ type: "done", id, ...state, ...(spawnError ? { startError: spawnError.message } : {}) });
  };

  child.on("error", (error) => {
    // Only spawn failures end the run; later errors (e.g. from kill) are irrelevant here.
    if (pgid === undefined) void finish(error);
  });
  if (pgid === undefined) return;

  running.set(id, {
    pgid,
    cancel: () => {
      if (!exited) terminate();
    },
  });
  send({ type: "spawned", id, pid: pgid });
  timers.push(
    setTimeout(() => {
      if (exited) return;
      state.timedOut = true;
      terminate();
    }, timeoutMs),
  );
  child.on("exit", (code, sig) => {
    exited = true;
    exitedByItself = code !== null && sig === null;
    // The caller decides "cancelled" by whether its cancel came before this (as it did when it forked itself).
    send({ type: "exited", id, exitCode: code, signal: sig, spawnToExitMs: performance.now() - started });
    // Grandchildren may keep the pipes open indefinitely; 'close' would then never fire.
    timers.push(setTimeout(() => void finish(), PIPE_GRACE_MS));
  });
  child.on("close", () => void finish());
}

/** The server is gone (or asked us to stop): nobody will read the results, so stop every tree and exit. */
async function shutdown() {
  const groups = [...running.values()].map((r) => r.pgid);
  for (const pgid of groups) signalGroup(pgid, "SIGTERM");
  const deadline = Date.now() + KILL_GRACE_MS;
  while (groups.some(groupAlive) && Date.now() < deadline) await sleep(POLL_MS);
  for (const pgid of groups) if (groupAlive(pgid)) signalGroup(pgid, "SIGKILL");
  process.exit(0);
}

process.on("message", (message) => {
  if (message.type === "run") run(message);
  else if (message.type === "cancel") running.get(message.id)?.cancel();
});
process.on("disconnect", () => void shutdown());
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
send({ type: "ready" });
