import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { listMarkedProcesses, runCommand as runWith, type TRunCommandInput } from "./run-command";
import { startSpawner, type TSpawner } from "./spawner";

let spawner: TSpawner;
beforeAll(async () => {
  spawner = await startSpawner();
});
afterAll(async () => {
  await spawner.stop();
});
const runCommand = (input: Omit<TRunCommandInput, "spawner">) => runWith({ ...input, spawner });

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "run-command-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs a command while recording its marker and the most marked processes seen at once mid-run
 * (sampled until it ends, not at a fixed moment); `onTree` is called once `treeSize` of them are
 * alive together (a synchronization point: e.g. abort only once the whole tree is up).
 */
async function runTracked(command: string, opts: { timeoutMs: number; signal?: AbortSignal; treeSize?: number; onTree?: () => void }) {
  let marker = "";
  let seenDuringRun: number[] = [];
  let running = true;
  const sampling = (async () => {
    while (running) {
      const seen = marker ? listMarkedProcesses(marker) : [];
      if (seen.length > seenDuringRun.length) {
        seenDuringRun = seen;
        if (opts.treeSize && seen.length >= opts.treeSize) opts.onTree?.();
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  try {
    const result = await runCommand({
      command,
      cwd: dir,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      onSpawn: (info) => {
        marker = info.marker;
      },
    });
    return { result, marker, seenDuringRun };
  } finally {
    running = false;
    await sampling;
  }
}

describe("runCommand", () => {
  it("returns exit code, stdout, stderr, and honours cwd and env", async () => {
    const r = await runCommand({
      command: 'echo "out $FOO"; pwd; echo err >&2',
      cwd: dir,
      timeoutMs: 30_000,
      env: { FOO: "bar" },
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`out bar\n${dir}\n`);
    expect(r.stderr).toBe("err\n");
    expect(r).toMatchObject({ timedOut: false, cancelled: false, truncated: false, signal: null });
    // The fork's own time is measured inside the caller's wait.
    expect(r.spawnToExitMs).toBeGreaterThan(0);
    expect(r.spawnToExitMs).toBeLessThanOrEqual(r.durationMs);
  });

  it("is forked by the spawner process, not by the caller", async () => {
    const r = await runCommand({ command: "echo $PPID", cwd: dir, timeoutMs: 30_000 });
    expect(Number(r.stdout.trim())).toBe(spawner.pid());
    expect(spawner.pid()).not.toBe(process.pid);
  });

  it("reports a non-zero exit as a normal result", async () => {
    const r = await runCommand({ command: "echo nope >&2; exit 3", cwd: dir, timeoutMs: 30_000 });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toBe("nope\n");
  });

  it("bounds output, flags truncation and keeps draining the pipe", async () => {
    const r = await runCommand({ command: "yes | head -c 1000000", cwd: dir, timeoutMs: 30_000 });
    expect(r.exitCode).toBe(0);
    expect(r.truncated).toBe(true);
    expect(Buffer.byteLength(r.stdout)).toBe(65536);
    expect(r.stdout.startsWith("y\ny\n")).toBe(true);

    const small = await runCommand({
      command: "printf 'abcdef' >&2",
      cwd: dir,
      timeoutMs: 30_000,
      maxOutputBytes: 4,
    });
    expect(small.stderr).toBe("abcd");
    expect(small.truncated).toBe(true);
  });

  it("does not split a multi-byte character when truncating", async () => {
    const r = await runCommand({ command: "printf 'aé'", cwd: dir, timeoutMs: 30_000, maxOutputBytes: 2 });
    expect(r.stdout).toBe("a");
    expect(r.truncated).toBe(true);
  });

  it("kills the whole process tree on timeout", async () => {
    // The timeout leaves a loaded machine seconds to start the tree (it is seen whole mid-run); the
    // tree would sleep 30 s: timedOut, and the tree gone, can only be the timeout's doing.
    const { result, marker, seenDuringRun } = await runTracked("bash -c 'sleep 30 & sleep 30 & wait'", { timeoutMs: 3000 });
    expect(result.timedOut).toBe(true);
    expect(result.cancelled).toBe(false);
    expect(result.exitCode).toBeNull();
    expect(seenDuringRun.length).toBeGreaterThanOrEqual(3);
    expect(listMarkedProcesses(marker)).toEqual([]);
  });

  it("kills the whole process tree on abort", async () => {
    // Aborted once the whole tree is up (not after a fixed delay); its timeout (60 s) is out of reach.
    const controller = new AbortController();
    const { result, marker, seenDuringRun } = await runTracked("sleep 30 & sleep 30 & wait", {
      timeoutMs: 60_000,
      signal: controller.signal,
      treeSize: 3,
      onTree: () => controller.abort(),
    });
    expect(result.cancelled).toBe(true);
    expect(result.timedOut).toBe(false);
    expect(result.exitCode).toBeNull();
    expect(seenDuringRun.length).toBeGreaterThanOrEqual(3);
    expect(listMarkedProcesses(marker)).toEqual([]);
  });

  it("escalates to SIGKILL when the tree ignores SIGTERM", async () => {
    // Stopped once the whole tree is up, so the trap is set (the sleeps start after it), however slow
    // the machine: a timeout could fire before bash set the trap, and SIGTERM would then suffice.
    const controller = new AbortController();
    const { result, marker } = await runTracked("trap '' TERM; sleep 30 & sleep 30 & wait", {
      timeoutMs: 60_000,
      signal: controller.signal,
      treeSize: 3,
      onTree: () => controller.abort(),
    });
    expect(result.cancelled).toBe(true);
    expect(result.signal).toBe("SIGKILL");
    expect(listMarkedProcesses(marker)).toEqual([]);
  });

  it("does not hang when a grandchild keeps the pipes open after bash exits", async () => {
    // Not timed out (10 s, well below the grandchild's 30 s): it returned when bash exited.
    const { result, marker } = await runTracked("sleep 30 & echo done", { timeoutMs: 10_000 });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("done\n");
    expect(result.timedOut).toBe(false);
    expect(listMarkedProcesses(marker)).toEqual([]);
  });

  it("reaps background processes left behind with closed pipes", async () => {
    const { result, marker } = await runTracked("sleep 30 >/dev/null 2>&1 & echo ok", { timeoutMs: 10_000 });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("ok\n");
    expect(listMarkedProcesses(marker)).toEqual([]);
  });

  it("never spawns when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const file = join(dir, "should-not-exist");
    let spawned = false;
    // The spawner is never asked (so nothing can land after the checks below).
    const asked = vi.spyOn(spawner, "run");
    const r = await runCommand({
      command: `touch '${file}'`,
      cwd: dir,
      timeoutMs: 30_000,
      signal: controller.signal,
      onSpawn: () => {
        spawned = true;
      },
    }).finally(() => asked.mockRestore());
    expect(asked).not.toHaveBeenCalled();
    expect(r.cancelled).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.spawnToExitMs).toBeNull();
    expect(spawned).toBe(false);
    expect(existsSync(file)).toBe(false);
  });

  it("resolves with a clear error for a nonexistent cwd", async () => {
    const missing = join(dir, "missing");
    let spawned = false;
    const r = await runCommand({
      command: "true",
      cwd: missing,
      timeoutMs: 30_000,
      onSpawn: () => {
        spawned = true;
      },
    });
    expect(r.exitCode).toBeNull();
    expect(r.stderr).toBe("The working directory does not exist.");
    expect(spawned).toBe(false);
    expect(existsSync(missing)).toBe(false);
  });
});
