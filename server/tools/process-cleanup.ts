import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { groupAlive, HAS_PROC } from "./proc.mjs";
import { listMarkedProcesses, runCommand, type TRunCommandInput, type TRunCommandResult } from "./run-command";

/** Thrown when a revoked run tries to prepare a process, start a command or write a file. */
export class RunRevokedError extends Error {
  readonly code = "run_revoked";
  constructor(readonly runId: string, reason: string) {
    super(`The run was revoked (${reason}); no new commands or file writes may start.`);
    this.name = "RunRevokedError";
  }
}

/**
 * What `prepare()` mints before a spawn: a random marker the whole tree carries in its environment
 * (`COUNTERSIGN_PROCESS_MARKER`) and a terminate-only callback pinned to that marker.
 */
export type TCleanupToken = {
  readonly runId: string;
  readonly marker: string;
  /** Throws {@link RunRevokedError} once the run is revoked; call immediately before spawning. */
  assertCurrent: () => void;
  /** Records the spawned leader's pid: its process group is signalled too (catches children that cleared their env). */
  attach: (pid: number) => void;
  /** Aborts when the tree is terminated: a command still on its way to a process (a sandbox starting) never starts. */
  readonly stopped: AbortSignal;
  /**
   * Stops this token's marked tree, and only it. Still works after the run was revoked: revocation
   * blocks new work, never the cleanup of work already started. Resolves once the tree is gone.
   */
  terminate: () => Promise<void>;
};

type TEntry = {
  runId: string;
  marker: string;
  pgids: Set<number>;
  /** Aborted by kill(): the spawn request still in flight is cancelled, not only the processes already there. */
  stop: AbortController;
  /** For trees that live elsewhere (a paired device): how to ask their owner to stop them. */
  remote?: () => Promise<void> | void;
};

type TOptions = {
  /** SIGTERM first, SIGKILL for whatever is left after this long. */
  graceMs?: number;
  /** How long a revocation is remembered (runs are never resumed after they are revoked). */
  revokedTtlMs?: number;
};

const POLL_MS = 25;

function signal(target: number, sig: NodeJS.Signals): void {
  try {
    process.kill(target, sig);
  } catch {
    // Already gone: that is the goal.
  }
}

/** Pids still alive in the marked tree: marked processes (Linux /proc) plus members of the attached groups. */
function treeAlive(entry: TEntry): boolean {
  if (HAS_PROC && listMarkedProcesses(entry.marker).length > 0) return true;
  for (const pgid of entry.pgids) if (groupAlive(pgid)) return true;
  return false;
}

function signalTree(entry: TEntry, sig: NodeJS.Signals): void {
  for (const pgid of entry.pgids) signal(-pgid, sig);
  if (HAS_PROC) for (const pid of listMarkedProcesses(entry.marker)) signal(pid, sig);
}

/**
 * Per-run process cleanup. `prepare(runId)` mints `{ marker, terminate }` before a spawn (refused
 * once the run is revoked); `revoke(runId)` blocks new preparations, commands and file writes of
 * that run while every previously minted `terminate()` can still stop its own marked tree (and only
 * it); `finalize(marker)` ends a token on exit or spawn failure, reaping what the tree left behind.
 */
export class ProcessCleanup {
  private readonly live = new Map<string, TEntry>();
  private readonly revoked = new Map<string, { at: number; reason: string }>();
  private readonly graceMs: number;
  private readonly revokedTtlMs: number;

  constructor(options: TOptions = {}) {
    this.graceMs = options.graceMs ?? 500;
    this.revokedTtlMs = options.revokedTtlMs ?? 6 * 3_600_000;
  }

  /** Mints a marker and its terminate callback for one spawn of `runId`; throws once the run is revoked. */
  prepare(runId: string, options: { remote?: () => Promise<void> | void } = {}): TCleanupToken {
    this.assertCurrent(runId);
    const entry: TEntry = { runId, marker: randomBytes(16).toString("hex"), pgids: new Set(), stop: new AbortController(), remote: options.remote };
    this.live.set(entry.marker, entry);
    return {
      runId,
      marker: entry.marker,
      assertCurrent: () => this.assertCurrent(runId),
      attach: (pid) => {
        // A finalized token owns nothing any more: a reused pid must never be signalled through it.
        if (this.live.get(entry.marker) === entry && Number.isSafeInteger(pid) && pid > 1) entry.pgids.add(pid);
      },
      stopped: entry.stop.signal,
      terminate: () => this.kill(entry),
    };
  }

  /** Blocks new preparations, commands and file writes of `runId`; minted terminate callbacks keep working. */
  revoke(runId: string, reason = "revoked"): void {
    const now = Date.now();
    for (const [id, r] of this.revoked) if (now - r.at > this.revokedTtlMs) this.revoked.delete(id);
    if (!this.revoked.has(runId)) this.revoked.set(runId, { at: now, reason });
  }

  isRevoked(runId: string): boolean {
    return this.revoked.has(runId);
  }

  /** Throws {@link RunRevokedError} when `runId` was revoked. */
  assertCurrent(runId: string): void {
    const revoked = this.revoked.get(runId);
    if (revoked) throw new RunRevokedError(runId, revoked.reason);
  }

  /** Writes a file on behalf of a run; refused once the run is revoked. */
  async writeFile(runId: string, path: string, data: string | Uint8Array): Promise<void> {
    this.assertCurrent(runId);
    await writeFile(path, data);
  }

  /** Markers of the trees of `runId` that have not been finalized yet. */
  liveMarkers(runId: string): string[] {
    return [...this.live.values()].filter((e) => e.runId === runId).map((e) => e.marker);
  }

  /** Stops every live tree of `runId` (each through its own token). */
  async terminateRun(runId: string): Promise<void> {
    await Promise.all([...this.live.values()].filter((e) => e.runId === runId).map((e) => this.kill(e)));
  }

  /**
   * Ends a token after its command exited (or failed to start): reaps leftovers of its tree, then
   * forgets it. `treeEnded`: the spawner saw the command's PID namespace end with it, so nothing of
   * the tree is left and the scan of /proc (milliseconds of the event loop each) is skipped.
   */
  async finalize(marker: string, options: { treeEnded?: boolean } = {}): Promise<void> {
    const entry = this.live.get(marker);
    if (!entry) return;
    try {
      if (!entry.remote && !options.treeEnded && treeAlive(entry)) await this.kill(entry);
    } finally {
      this.live.delete(marker);
      // The group ids may be reused by unrelated processes from now on; the marker alone stays safe.
      entry.pgids.clear();
    }
  }

  private async kill(entry: TEntry): Promise<void> {
    entry.stop.abort();
    if (entry.remote) {
      await entry.remote();
      return;
    }
    if (!treeAlive(entry)) return;
    signalTree(entry, "SIGTERM");
    const termDeadline = Date.now() + this.graceMs;
    while (treeAlive(entry) && Date.now() < termDeadline) await new Promise((r) => setTimeout(r, POLL_MS));
    const killDeadline = Date.now() + 5000;
    while (treeAlive(entry) && Date.now() < killDeadline) {
      signalTree(entry, "SIGKILL");
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
}

/**
 * Runs a command for `runId` through the registry: mints the marker, checks the run is current
 * immediately before spawning (no await in between), stops the whole marked tree when `signal`
 * aborts, and finalizes the token on exit. Throws {@link RunRevokedError} for a revoked run.
 */
export async function runCommandForRun(
  runId: string,
  input: Omit<TRunCommandInput, "marker">,
  registry: ProcessCleanup,
  onPrepared?: (token: TCleanupToken) => void,
): Promise<TRunCommandResult & { marker: string }> {
  const token = registry.prepare(runId);
  const onAbort = () => {
    void token.terminate();
  };
  input.signal?.addEventListener("abort", onAbort, { once: true });
  let treeEnded = false;
  try {
    onPrepared?.(token);
    token.assertCurrent();
    const result = await runCommand({
      ...input,
      // A terminate (the run revoked) cancels a command that has not reached a process yet, too.
      signal: input.signal ? AbortSignal.any([input.signal, token.stopped]) : token.stopped,
      marker: token.marker,
      onSpawn: (info) => {
        if (info.pid !== null) token.attach(info.pid);
        input.onSpawn?.(info);
      },
    });
    treeEnded = result.treeEnded;
    return { ...result, marker: token.marker };
  } finally {
    input.signal?.removeEventListener("abort", onAbort);
    await registry.finalize(token.marker, { treeEnded });
  }
}
