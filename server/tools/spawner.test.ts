import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listMarkedProcesses, runCommand } from "./run-command";
import { SpawnerUnavailableError, startSpawner } from "./spawner";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "spawner-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const waitFor = async <T>(fn: () => T | null | undefined | false, timeoutMs: number, what: string): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** Fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, ... */
const statOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
};

const TREE = "sleep 30 & sleep 30 & wait";

describe("the spawner process", () => {
  it("carries none of the server's environment and is outside its process group", async () => {
    process.env.COUNTERSIGN_TEST_SPAWNER_CANARY = "canary";
    const spawner = await startSpawner();
    try {
      const pid = spawner.pid() as number;
      const names = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").filter(Boolean).map((v) => v.split("=")[0]);
      // Only what Node itself adds for the IPC channel.
      expect(names.filter((n) => !n?.startsWith("NODE_CHANNEL_"))).toEqual([]);
      expect(statOf(pid)[2]).not.toBe(statOf(process.pid)[2]);
    } finally {
      delete process.env.COUNTERSIGN_TEST_SPAWNER_CANARY;
      await spawner.stop();
    }
  });

  it("killed mid-run: the command ends at once with a clear error, its tree is gone, and the next command runs on a new spawner", async () => {
    const spawner = await startSpawner();
    try {
      const first = spawner.pid() as number;
      let marker = "";
      const running = runCommand({ command: TREE, cwd: dir, timeoutMs: 60_000, spawner, onSpawn: (info) => (marker = info.marker) });
      await waitFor(() => marker && listMarkedProcesses(marker).length >= 3, 15_000, "the tree");
      process.kill(first, "SIGKILL");
      // "At once": the command is rejected on the spawner's death (the error says so), not left until
      // its tree (sleep 30) or its timeout (60 s) would have ended it, which would resolve instead.
      const error = await running.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SpawnerUnavailableError);
      expect((error as Error).message).toBe("The command spawner process was killed (SIGKILL) while the command ran: the command was stopped and its outcome is unknown.");
      await waitFor(() => listMarkedProcesses(marker).length === 0, 15_000, "the orphaned tree to die");

      const next = await runCommand({ command: "echo $PPID", cwd: dir, timeoutMs: 60_000, spawner });
      expect(next.exitCode).toBe(0);
      expect(Number(next.stdout.trim())).toBe(spawner.pid());
      expect(spawner.pid()).not.toBe(first);
    } finally {
      await spawner.stop();
    }
  });

  it("stop() stops the commands still running and refuses new ones", async () => {
    const spawner = await startSpawner();
    let marker = "";
    const running = runCommand({ command: TREE, cwd: dir, timeoutMs: 60_000, spawner, onSpawn: (info) => (marker = info.marker) });
    await waitFor(() => marker && listMarkedProcesses(marker).length >= 3, 15_000, "the tree");
    const pid = spawner.pid() as number;
    await spawner.stop();
    await expect(running).rejects.toThrow("The server is stopping: the command was stopped before it finished.");
    expect(listMarkedProcesses(marker)).toEqual([]);
    expect(() => process.kill(pid, 0)).toThrow();
    await expect(runCommand({ command: "true", cwd: dir, timeoutMs: 5000, spawner })).rejects.toThrow("The server is stopping; no new command starts.");
  });
});
