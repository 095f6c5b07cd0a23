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
 *
 * A `pidNamespace` plan is bubblewrap with `--info-fd 3`: it writes the host pid of the namespace's
 * init to that pipe, and `done` waits for that init to end before it says treeEnded.
 *
 * A run with `sandbox: {key, file, args, cwd, idleMs, command}` may run inside its session's
 * long-lived sandbox (server/tools/exec-sandbox.ts, scope `session`): when that sandbox is alive, or
 * when the same key ran a command less than `idleMs` ago, `file`/`args` start it (bubblewrap around
 * this very script with `--in-sandbox`, the sandbox's agent) and `command` is sent to that agent,
 * which forks it as it forks any command here. Otherwise (a session's first command) the request's
 * own plan runs, a sandbox of its own. The agent's messages for the session's own ids are relayed as
 * they come, except `spawned`, whose pid counts in the sandbox's PID namespace (sent as null: it
 * names no process out here). A sandbox with no command for `idleMs` is ended.
 *
 * In the sandbox (`--in-sandbox`) the end of a command also ends what it left behind: with no other
 * command of the session running, every process of the sandbox but its init and this agent; with
 * others running, the processes that carry the command's marker.
 */
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { readFileSync } from "node:fs";
import { groupAlive, scanProc, signalGroup, statFields } from "./proc.mjs";

const KILL_GRACE_MS = 500;
const PIPE_GRACE_MS = 200;
const POLL_MS = 25;
/** How often, and how long at most, `done` waits for an ended namespace's init to be gone. */
const INIT_POLL_MS = 2;
const INIT_WAIT_MS = 2000;

/** This process is a session sandbox's agent (started by bubblewrap inside it), not the server's spawner. */
const IN_SANDBOX = process.argv.includes("--in-sandbox");
/** The variable a command's whole tree carries (server/tools/run-command.ts). */
const MARKER_VAR = "COUNTERSIGN_PROCESS_MARKER";
/** How long an agent that stops answering may overrun a command's timeout before its whole sandbox is ended. */
const BACKSTOP_MS = 10_000;

/** Commands still running, by request id: how to cancel each, and its process group (null: inside a session sandbox). */
const running = new Map();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Whether the namespace init `pid` (a member of group `pgid`) is gone: no such process, a zombie,
 * or a pid already reused outside the group. The kernel makes an init exit only after every other
 * process of its namespace is gone, so a gone init means a gone namespace.
 */
function initGone(pid, pgid) {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return err.code !== "EPERM";
  }
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return true;
  }
  const { state, pgrp } = statFields(stat);
  return state === "Z" || pgrp !== pgid;
}

/**
 * Waits until the namespace's init is gone. bubblewrap's outer process exits as soon as the
 * command does, while its init may still be ending the namespace's other processes (it dies of
 * --die-with-parent a moment later). False when the init's pid is unknown or it outlives the wait.
 */
async function namespaceEnded(initPid, pgid) {
  if (initPid === null) return false;
  const deadline = performance.now() + INIT_WAIT_MS;
  while (!initGone(initPid, pgid)) {
    if (performance.now() > deadline) return false;
    await sleep(INIT_POLL_MS);
  }
  return true;
}

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
    const stdio = pidNamespace ? ["ignore", "pipe", "pipe", "pipe"] : ["ignore", "pipe", "pipe"];
    child = spawn(file, args, { cwd, env, ...(uid !== undefined ? { uid, gid } : {}), detached: true, stdio });
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
  // bubblewrap's --info-fd 3: {"child-pid": N, ...}, the namespace init's pid as this process sees it.
  let initPid = null;
  if (pidNamespace && child.stdio[3]) {
    let info = "";
    child.stdio[3].on("data", (chunk) => {
      info += chunk.toString("utf8");
      const match = info.match(/"child-pid"\s*:\s*(\d+)/);
      if (match) initPid = Number(match[1]);
    });
    child.stdio[3].on("error", () => {});
  }

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
    // nothing to reap once the namespace's init is gone: the kernel ends every other process of a
    // namespace before its init exits. bubblewrap's outer process does not wait for that (it exits
    // with the command, and its init then dies of --die-with-parent), so this waits for the init.
    // Only the namespace's processes and bubblewrap itself were in the group. A terminated or
    // signalled bubblewrap takes that path no more, so it is reaped like any other group.
    const nothingLeft = pidNamespace === true && exitedByItself && !termSent && (await namespaceEnded(initPid, pgid));
    state.treeEnded = nothingLeft;
    let cleaned = false;
    if (IN_SANDBOX && pgid !== undefined) {
      // In a session sandbox the agent itself ends what the command left (its group, its marker, or
      // all); still "ended with it" only when the command ended by itself (as with its own namespace).
      running.delete(id);
      cleaned = await endLeftovers(request.env?.[MARKER_VAR], pgid);
      state.treeEnded = cleaned && exitedByItself && !termSent;
    }
    if (pgid !== undefined && !nothingLeft && !cleaned) {
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
    child.stdio[3]?.destroy();
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

/**
 * In a session sandbox, once a command exited by itself: ends what it left behind (background jobs
 * of its group, a `setsid` child, a daemon). With no other command of the session running, every
 * process of the sandbox but its init (pid 1) and this agent is a leftover; otherwise the members
 * of its group and the processes carrying its marker are. True once they are gone (SIGKILL cannot
 * be refused; the wait is bounded). The caller has already removed the command from `running`.
 */
async function endLeftovers(marker, pgid) {
  const self = process.pid;
  const leftovers = [];
  const needle = marker ? `${MARKER_VAR}=${marker}` : null;
  const quiet = running.size === 0;
  scanProc("stat", (pid, stat) => {
    if (pid === 1 || pid === self) return false;
    if (quiet || statFields(stat).pgrp === pgid) leftovers.push(pid);
    return false;
  });
  if (!quiet && needle !== null) {
    scanProc("environ", (pid, environ) => {
      if (pid !== 1 && pid !== self && !leftovers.includes(pid) && environ.split("\0").includes(needle)) leftovers.push(pid);
      return false;
    });
  }
  const alive = (pid) => {
    try {
      return statFields(readFileSync(`/proc/${pid}/stat`, "latin1")).state !== "Z";
    } catch {
      return false;
    }
  };
  const deadline = performance.now() + INIT_WAIT_MS;
  let left = leftovers.filter(alive);
  while (left.length > 0) {
    for (const pid of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
    if (performance.now() > deadline) return false;
    await sleep(INIT_POLL_MS);
    left = left.filter(alive);
  }
  return true;
}

/** Session sandboxes by key: the long-lived bubblewrap, its agent's channel, and the ids it runs. */
const sandboxes = new Map();

/** Ends a session sandbox: its agent stops its commands and exits, bubblewrap then ends the namespaces; SIGKILL after the grace. */
function endSandbox(box) {
  if (box.ending) return;
  box.ending = true;
  if (sandboxes.get(box.key) === box) sandboxes.delete(box.key);
  clearTimeout(box.idleTimer);
  if (box.child.connected) box.child.disconnect();
  else signalGroup(box.child.pid, "SIGKILL");
  setTimeout(() => signalGroup(box.child.pid, "SIGKILL"), KILL_GRACE_MS).unref();
}

/** The session's sandbox, started on its first command (plan from the server: bubblewrap around this script). */
function sandboxFor(spec) {
  const existing = sandboxes.get(spec.key);
  if (existing && !existing.ending) return existing;
  const box = { key: spec.key, idleMs: spec.idleMs, child: null, ready: false, ending: false, queue: [], ids: new Map(), idleTimer: undefined, stderr: "" };
  try {
    box.child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: {}, detached: true, stdio: ["ignore", "ignore", "pipe", "ipc"], serialization: "advanced" });
  } catch (error) {
    box.startError = error.message;
    return box;
  }
  sandboxes.set(spec.key, box);
  box.child.stderr.on("data", (chunk) => {
    if (box.stderr.length < 2000) box.stderr += chunk.toString("utf8");
  });
  box.child.stderr.on("error", () => {});
  box.child.on("error", () => {});
  box.child.on("message", (m) => {
    if (m.type === "ready") {
      box.ready = true;
      for (const message of box.queue.splice(0)) box.child.send(message, () => {});
      return;
    }
    // The agent shares its sandbox with the session's commands, so what it says is taken only for
    // the session's own ids, field by field, with the output bound kept out here too.
    const job = box.ids.get(m?.id);
    if (!job) return;
    if (m.type === "spawned") return send({ type: "spawned", id: m.id, pid: null });
    if (m.type === "output") {
      const stream = m.stream === "stderr" ? "stderr" : "stdout";
      const room = job.maxOutputBytes - job.sent[stream];
      if (!(m.chunk instanceof Uint8Array) || room <= 0) return;
      const chunk = m.chunk.subarray(0, room);
      job.sent[stream] += chunk.length;
      return send({ type: "output", id: m.id, stream, chunk });
    }
    if (m.type === "exited") {
      job.exited = true;
      clearTimeout(job.backstop);
      return send({ type: "exited", id: m.id, exitCode: Number.isInteger(m.exitCode) ? m.exitCode : null, signal: typeof m.signal === "string" ? m.signal : null, spawnToExitMs: typeof m.spawnToExitMs === "number" ? m.spawnToExitMs : null });
    }
    if (m.type === "done") {
      send({ type: "done", id: m.id, timedOut: m.timedOut === true, truncated: m.truncated === true, startError: typeof m.startError === "string" ? m.startError : null, treeEnded: m.treeEnded === true });
      box.ids.delete(m.id);
      running.delete(m.id);
      idleWhenEmpty(box);
    }
  });
  box.child.on("exit", (code, signal) => {
    box.ending = true;
    if (sandboxes.get(box.key) === box) sandboxes.delete(box.key);
    clearTimeout(box.idleTimer);
    const why = box.ready ? null : `the session sandbox did not start (${signal ?? `exit code ${code}`}): ${box.stderr.trim() || "no message"}`;
    for (const [id, job] of box.ids) {
      clearTimeout(job.backstop);
      running.delete(id);
      if (why === null && !job.exited) send({ type: "exited", id, exitCode: null, signal: "SIGKILL", spawnToExitMs: null });
      send({ type: "done", id, timedOut: job.timedOut, truncated: false, startError: why, treeEnded: false });
    }
    box.ids.clear();
  });
  return box;
}

/** A sandbox with nothing running ends after its idle time (a new command before then reuses it). */
function idleWhenEmpty(box) {
  if (box.ids.size > 0 || box.ending) return;
  clearTimeout(box.idleTimer);
  box.idleTimer = setTimeout(() => endSandbox(box), box.idleMs);
}

/** Keys whose last command ran in a sandbox of its own less than their idle time ago, with the timer that forgets them. */
const recent = new Map();

/** A session's first command runs in its own sandbox; a second one within the idle time starts (or reuses) the session's. */
function route(request) {
  const { sandbox, ...own } = request;
  const live = sandboxes.get(sandbox.key);
  if ((live && !live.ending) || recent.has(sandbox.key)) {
    clearTimeout(recent.get(sandbox.key));
    recent.delete(sandbox.key);
    return runInSandbox(request);
  }
  recent.set(
    sandbox.key,
    setTimeout(() => recent.delete(sandbox.key), sandbox.idleMs),
  );
  run(own);
}

/** Runs a command in its session's sandbox: the agent there forks it and enforces its bounds; this process holds a backstop. */
function runInSandbox(request) {
  const { sandbox, file: _file, args: _args, cwd: _cwd, pidNamespace: _pidNamespace, ...bounds } = request;
  const command = { ...bounds, ...sandbox.command };
  const { id } = command;
  const box = sandboxFor(sandbox);
  if (box.startError !== undefined) return send({ type: "done", id, timedOut: false, truncated: false, startError: `the session sandbox could not start: ${box.startError}`, treeEnded: false });
  clearTimeout(box.idleTimer);
  const job = { exited: false, timedOut: false, backstop: undefined, maxOutputBytes: command.maxOutputBytes, sent: { stdout: 0, stderr: 0 } };
  // The agent kills on timeout; should it stop answering, the whole sandbox is ended instead.
  job.backstop = setTimeout(() => {
    job.timedOut = true;
    endSandbox(box);
  }, command.timeoutMs + KILL_GRACE_MS + BACKSTOP_MS);
  box.ids.set(id, job);
  const message = { type: "run", ...command };
  running.set(id, {
    pgid: null,
    cancel: () => {
      const queued = box.queue.indexOf(message);
      if (queued === -1) {
        if (box.child.connected) box.child.send({ type: "cancel", id }, () => {});
        return;
      }
      // Cancelled while the sandbox was still starting: the command never starts.
      box.queue.splice(queued, 1);
      clearTimeout(job.backstop);
      box.ids.delete(id);
      running.delete(id);
      send({ type: "done", id, timedOut: false, truncated: false, startError: null, treeEnded: true });
      idleWhenEmpty(box);
    },
  });
  if (box.ready) box.child.send(message, () => {});
  else box.queue.push(message);
}

/** The server is gone (or asked us to stop): nobody will read the results, so stop every tree and exit. */
async function shutdown() {
  for (const box of sandboxes.values()) signalGroup(box.child.pid, "SIGKILL");
  const groups = [...running.values()].map((r) => r.pgid).filter((pgid) => pgid !== null);
  for (const pgid of groups) signalGroup(pgid, "SIGTERM");
  const deadline = Date.now() + KILL_GRACE_MS;
  while (groups.some(groupAlive) && Date.now() < deadline) await sleep(POLL_MS);
  for (const pgid of groups) if (groupAlive(pgid)) signalGroup(pgid, "SIGKILL");
  process.exit(0);
}

process.on("message", (message) => {
  if (message.type === "run") (message.sandbox && !IN_SANDBOX ? route(message) : run(message));
  else if (message.type === "cancel") running.get(message.id)?.cancel();
});
process.on("disconnect", () => void shutdown());
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
send({ type: "ready" });
