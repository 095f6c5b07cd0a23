import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { listMarkedProcesses } from "./run-command";
import { startSpawner, type TSpawner } from "./spawner";
import { ProcessCleanup, RunRevokedError, runCommandForRun, type TCleanupToken } from "./process-cleanup";

let spawner: TSpawner;
beforeAll(async () => {
  spawner = await startSpawner();
});
afterAll(async () => {
  await spawner.stop();
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "process-cleanup-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const waitFor = async (fn: () => boolean, timeoutMs = 15_000, what = "condition") => {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** A tree of three marked processes: one in another session (setsid), one double-forked, one plain child. */
const TREE = "setsid sleep 60 & (sleep 60 &); sleep 60 & wait";

/** Starts TREE through the registry in the background; resolves once all of it is running. */
async function startTree(registry: ProcessCleanup, runId: string, extra: { signal?: AbortSignal; timeoutMs?: number } = {}) {
  let token: TCleanupToken | null = null;
  const done = runCommandForRun(runId, { command: TREE, cwd: dir, spawner, timeoutMs: extra.timeoutMs ?? 60_000, signal: extra.signal }, registry, (t) => {
    token = t;
  });
  await waitFor(() => token !== null && listMarkedProcesses((token as TCleanupToken).marker).length >= 3, 15_000, "the tree to start");
  return { token: token as unknown as TCleanupToken, done };
}

describe("ProcessCleanup", () => {
  it("mints a distinct marker per spawn that the command's environment carries", async () => {
    const registry = new ProcessCleanup();
    const a = await runCommandForRun("run_a", { command: "echo $COUNTERSIGN_PROCESS_MARKER", cwd: dir, spawner, timeoutMs: 30_000 }, registry);
    const b = await runCommandForRun("run_a", { command: "echo $COUNTERSIGN_PROCESS_MARKER", cwd: dir, spawner, timeoutMs: 30_000 }, registry);
    expect(a.stdout.trim()).toBe(a.marker);
    expect(a.marker).toMatch(/^[0-9a-f]{32}$/);
    expect(b.marker).not.toBe(a.marker);
    expect(registry.liveMarkers("run_a")).toEqual([]);
  });

  it("a revoked run cannot prepare, start a command or write a file", async () => {
    const registry = new ProcessCleanup();
    registry.revoke("run_r", "test");
    expect(registry.isRevoked("run_r")).toBe(true);
    expect(() => registry.prepare("run_r")).toThrow(RunRevokedError);
    // The spawner is never asked to start it (so nothing can land after the checks below).
    const asked = vi.spyOn(spawner, "run");
    try {
      await expect(runCommandForRun("run_r", { command: "touch ran.txt", cwd: dir, spawner, timeoutMs: 30_000 }, registry)).rejects.toBeInstanceOf(RunRevokedError);
      expect(asked).not.toHaveBeenCalled();
    } finally {
      asked.mockRestore();
    }
    await expect(registry.writeFile("run_r", join(dir, "written.txt"), "x")).rejects.toBeInstanceOf(RunRevokedError);
    expect(existsSync(join(dir, "ran.txt"))).toBe(false);
    expect(existsSync(join(dir, "written.txt"))).toBe(false);
    // Other runs are unaffected.
    await registry.writeFile("run_other", join(dir, "other.txt"), "ok");
    expect(readFileSync(join(dir, "other.txt"), "utf8")).toBe("ok");
  });

  it("a terminate minted before revocation still stops its own tree, and only it", async () => {
    const registry = new ProcessCleanup();
    const mine = await startTree(registry, "run_1");
    const sibling = await startTree(registry, "run_1");
    const other = await startTree(registry, "run_2");
    registry.revoke("run_1");
    expect(() => registry.prepare("run_1")).toThrow(RunRevokedError);

    await mine.token.terminate();
    expect(listMarkedProcesses(mine.token.marker)).toEqual([]);
    const result = await mine.done;
    expect(result.exitCode === null || result.exitCode !== 0).toBe(true);
    // Only that tree: the other tree of the same run and the other run's tree are untouched.
    expect(listMarkedProcesses(sibling.token.marker).length).toBeGreaterThanOrEqual(3);
    expect(listMarkedProcesses(other.token.marker).length).toBeGreaterThanOrEqual(3);

    await sibling.token.terminate();
    await other.token.terminate();
    await Promise.all([sibling.done, other.done]);
    expect(listMarkedProcesses(sibling.token.marker)).toEqual([]);
    expect(listMarkedProcesses(other.token.marker)).toEqual([]);
    expect(registry.liveMarkers("run_1")).toEqual([]);
  });

  it("an abort stops the whole tree, including a child that left the process group", async () => {
    const registry = new ProcessCleanup();
    const abort = new AbortController();
    const { token, done } = await startTree(registry, "run_c", { signal: abort.signal });
    abort.abort();
    const result = await done;
    expect(result.cancelled).toBe(true);
    await waitFor(() => listMarkedProcesses(token.marker).length === 0, 15_000, "the tree to die");
  });

  it("a timeout stops the whole tree, including a child that left the process group", async () => {
    const registry = new ProcessCleanup();
    let marker = "";
    // A timeout that leaves a loaded machine seconds to start the whole tree (watched forming below).
    const running = runCommandForRun("run_t", { command: TREE, cwd: dir, spawner, timeoutMs: 3000 }, registry, (t) => {
      marker = t.marker;
    });
    await waitFor(() => marker !== "" && listMarkedProcesses(marker).length >= 3, 15_000, "the tree to start");
    const result = await running;
    expect(result.timedOut).toBe(true);
    expect(listMarkedProcesses(marker)).toEqual([]);
  });

  it("finalize reaps what a finished command left running", async () => {
    const registry = new ProcessCleanup();
    const result = await runCommandForRun("run_f", { command: "setsid sleep 60 & echo started", cwd: dir, spawner, timeoutMs: 30_000 }, registry);
    expect(result.stdout).toBe("started\n");
    expect(listMarkedProcesses(result.marker)).toEqual([]);
  });

  it("remote tokens call their owner to stop the tree", async () => {
    const registry = new ProcessCleanup();
    let stopped = 0;
    const token = registry.prepare("run_remote", { remote: () => void stopped++ });
    registry.revoke("run_remote");
    await token.terminate();
    expect(stopped).toBe(1);
    await registry.terminateRun("run_remote");
    expect(stopped).toBe(2);
    await registry.finalize(token.marker);
    expect(registry.liveMarkers("run_remote")).toEqual([]);
  });
});
