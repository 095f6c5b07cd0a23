import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testDbKind } from "../../db/testing";
import type { TRequiredAction } from "../../server/core/envelope";
import { RunRevokedError } from "../../server/tools/process-cleanup";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { execTool } from "../../server/tools/host-tools";
import { listMarkedProcesses, runCommand } from "../../server/tools/run-command";
import { DeviceProcess, deviceSession, nodeTurn, runDeviceScript, toolResults } from "./devices-helpers";
import { decide, getResponse, invoke, invokeApproval, ok200, rows, script, sleep, waitUntil, workspaceOf } from "./helpers";

let app: TTestApp;
let admin: TTestUser;
let member: TTestUser;
let device: DeviceProcess;
let deviceId: string;

/**
 * A tree of marked processes: a plain background child, a double-forked one, and one that left
 * the process group and session (setsid). Writes its marker first so the test can find it.
 */
const TREE = "echo $COUNTERSIGN_PROCESS_MARKER > marker.txt; setsid sleep 60 & (sleep 60 &); sleep 60 & wait";

/** Pids alive (not zombies) among `pids`. */
const alive = (pids: number[]) =>
  pids.filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
      return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] !== "Z";
    } catch {
      return false;
    }
  });

/** Waits for TREE, started in `cwd`, to write its marker and for its 4 processes to be up. */
async function treeUp(cwd: string): Promise<{ marker: string; pids: number[] }> {
  const marker = await waitUntil(() => (existsSync(join(cwd, "marker.txt")) ? readFileSync(join(cwd, "marker.txt"), "utf8").trim() : ""), 30_000, "the marker");
  const pids = await waitUntil(() => {
    const found = listMarkedProcesses(marker);
    return found.length >= 4 ? found : null;
  }, 30_000, "the tree");
  return { marker, pids };
}

beforeAll(async () => {
  app = await startTestApp({ expirySweepMs: 200 });
  admin = await app.user("admin");
  member = await app.user("member");
  const paired = await DeviceProcess.paired(app, admin.apiKey, "worker", ["--allow", `tree=${TREE}`, "--allow", "uptime=uptime"], { cwd: mkdtempSync(join(tmpdir(), "cs-device-cwd-")) });
  device = paired.device;
  deviceId = paired.deviceId;
});
afterAll(async () => {
  await device?.stop();
  await app?.close();
});

/** What execTool gets from the host: the server's sandbox, no network, no named variables. */
const execContext = () => ({ sandbox: app.deps.sandbox, network: false, env: [] as string[], processes: app.deps.processes });

const cancel = (id: string, reason: string) => app.api(`/v1/responses/${id}/cancel`, { key: member.apiKey, body: { reason } });

describe(`process cleanup: exec on the server (${testDbKind()})`, () => {
  it("cancelling a response kills the whole tree of its command, and the run is revoked", async () => {
    const { env, approval, cwd } = await invokeApproval(app, member.apiKey, TREE);
    const approving = decide(app, admin.apiKey, approval.id, "approve");
    const { marker, pids } = await treeUp(cwd);
    expect(app.deps.processes.liveMarkers(env.id)).toEqual([marker]);

    const res = await cancel(env.id, "stop the build");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("cancelled");
    await waitUntil(() => listMarkedProcesses(marker).length === 0 && alive(pids).length === 0, 30_000, "every child to be gone");
    expect((await approving).status).toBe(200);
    expect(app.deps.processes.isRevoked(env.id)).toBe(true);
    await waitUntil(() => app.deps.processes.liveMarkers(env.id).length === 0, 30_000, "the token to be finalized");
    const [cancelled] = await rows<{ data: { reason: string } }>(app, `select data from response_events where response_id = '${env.id}' and type = 'response.cancelled'`);
    expect(cancelled?.data.reason).toBe("stop the build");

    // A command started for the revoked run after the revocation (any path) is refused; nothing runs:
    // the spawner is never asked to start it (so no late write can land after the check below).
    const spawned = vi.spyOn(app.deps.sandbox.spawner, "run");
    try {
      await expect(
        execTool.execute(
          { command: "touch late.txt" },
          { cwd, workspaceDir: cwd, signal: new AbortController().signal, userId: member.userId, sessionId: env.sessionId, responseId: env.id, exec: execContext() },
        ),
      ).rejects.toBeInstanceOf(RunRevokedError);
      expect(spawned).not.toHaveBeenCalled();
    } finally {
      spawned.mockRestore();
    }
    await expect(app.deps.processes.writeFile(env.id, join(cwd, "late-write.txt"), "x")).rejects.toBeInstanceOf(RunRevokedError);
    expect(existsSync(join(cwd, "late.txt"))).toBe(false);
    expect(existsSync(join(cwd, "late-write.txt"))).toBe(false);
  });

  it("an exec timeout kills the whole tree", async () => {
    // The timeout is generous so that the whole tree is up before it fires, even on a loaded machine
    // (the test watches it form); the tree itself would sleep 60 s.
    const env = await invoke(app, member.apiKey, script([{ toolCalls: [{ name: "exec", arguments: { command: TREE, timeoutMs: 5000 } }] }, { text: "done" }]));
    const approval = env.requiredAction as Extract<TRequiredAction, { type: "human_approval" }>;
    const approving = decide(app, admin.apiKey, approval.id, "approve");
    const cwd = workspaceOf(app, env.sessionId);
    const { marker, pids } = await treeUp(cwd);
    const done = await ok200(await approving);
    expect(done.status).toBe("completed");
    const result = toolResults(done)[0]?.output as { timedOut?: boolean; exitCode: number | null };
    expect(result.timedOut).toBe(true);
    expect(marker).toMatch(/^[0-9a-f]{32}$/);
    expect(listMarkedProcesses(marker)).toEqual([]);
    await waitUntil(() => alive(pids).length === 0, 30_000, "every child to be gone");
    expect(app.deps.processes.liveMarkers(env.id)).toEqual([]);
  });

  it("a command racing the cancel of its run is refused once the run is revoked", async () => {
    const { env, approval, cwd } = await invokeApproval(app, member.apiKey, "sleep 30");
    const approving = decide(app, admin.apiKey, approval.id, "approve");
    await waitUntil(() => app.deps.processes.liveMarkers(env.id).length === 1, 30_000, "the command to start");
    const ctx = { cwd, workspaceDir: cwd, signal: new AbortController().signal, userId: member.userId, sessionId: env.sessionId, responseId: env.id, exec: execContext() };
    const [cancelled, ...late] = await Promise.allSettled([
      cancel(env.id, "revoke"),
      ...Array.from({ length: 5 }, (_, i) => sleep(20 + i * 10).then(() => execTool.execute({ command: `touch race-${i}.txt; sleep 30` }, ctx))),
    ]);
    expect(cancelled.status).toBe("fulfilled");
    await approving;
    for (const outcome of late) {
      // Each one either was refused, or started before the revocation and was stopped with the run.
      if (outcome.status === "rejected") expect(outcome.reason).toBeInstanceOf(RunRevokedError);
      else expect((outcome.value as { exitCode: number | null }).exitCode).not.toBe(0);
    }
    expect(app.deps.processes.isRevoked(env.id)).toBe(true);
    await waitUntil(() => app.deps.processes.liveMarkers(env.id).length === 0, 30_000, "every tree to be gone");
    const spawned = vi.spyOn(app.deps.sandbox.spawner, "run");
    try {
      await expect(execTool.execute({ command: "touch after.txt" }, ctx)).rejects.toBeInstanceOf(RunRevokedError);
      expect(spawned).not.toHaveBeenCalled();
    } finally {
      spawned.mockRestore();
    }
    expect(existsSync(join(cwd, "after.txt"))).toBe(false);
  });

  it("a spawner killed mid-run: that run ends at once with a clear error, its tree is gone, and the next exec works", async () => {
    const { approval, cwd } = await invokeApproval(app, member.apiKey, TREE);
    const approving = decide(app, admin.apiKey, approval.id, "approve");
    const { marker, pids } = await treeUp(cwd);
    const spawner = app.deps.sandbox.spawner;
    const first = spawner.pid() as number;
    process.kill(first, "SIGKILL");

    // "At once": the run ends on the spawner's death (the error below says so), not when its tree
    // (sleep 60) would have ended nor at the exec's timeout — no clock needed to tell them apart.
    const done = await ok200(await approving);
    expect(done.status).toBe("completed");
    expect(toolResults(done)[0]?.output).toEqual({
      error: "The command spawner process was killed (SIGKILL) while the command ran: the command was stopped and its outcome is unknown.",
    });
    await waitUntil(() => listMarkedProcesses(marker).length === 0 && alive(pids).length === 0, 30_000, "every child to be gone");

    const next = await invokeApproval(app, member.apiKey, "echo again");
    const after = await ok200(await decide(app, admin.apiKey, next.approval.id, "approve"));
    expect(toolResults(after)[0]?.output).toEqual({ exitCode: 0, stdout: "again\n", stderr: "" });
    expect(spawner.pid()).not.toBe(first);
  });

  it("a terminate minted before the revocation still stops its own tree, and only it", async () => {
    const runs = ["run_mint_a", "run_mint_b"];
    const trees = runs.map((runId) => {
      const token = app.deps.processes.prepare(runId);
      const done = runCommand({ command: "setsid sleep 60 & sleep 60 & wait", cwd: app.dataDir, timeoutMs: 60_000, spawner: app.deps.sandbox.spawner, marker: token.marker, onSpawn: ({ pid }) => pid !== null && token.attach(pid) });
      return { token, done };
    });
    await waitUntil(() => trees.every((t) => listMarkedProcesses(t.token.marker).length >= 3), 30_000, "both trees");
    const [a, b] = trees as [(typeof trees)[number], (typeof trees)[number]];
    app.deps.processes.revoke("run_mint_a");
    expect(() => app.deps.processes.prepare("run_mint_a")).toThrow(RunRevokedError);
    // Revocation alone blocks new work; it does not take the cleanup right away from the earlier token.
    expect(listMarkedProcesses(a.token.marker).length).toBeGreaterThanOrEqual(3);
    await a.token.terminate();
    expect(listMarkedProcesses(a.token.marker)).toEqual([]);
    expect(listMarkedProcesses(b.token.marker).length).toBeGreaterThanOrEqual(3);
    await b.token.terminate();
    await Promise.all(trees.map((t) => t.done));
    for (const t of trees) await app.deps.processes.finalize(t.token.marker);
    expect(listMarkedProcesses(b.token.marker)).toEqual([]);
  });
});

describe(`process cleanup: node commands on a device (${testDbKind()})`, () => {
  it("cancelling a response kills the device command's whole tree and revokes the run there", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "default");
    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("worker", "tree"), { text: "done" }]);
    const approval = env.requiredAction as Extract<TRequiredAction, { type: "human_approval" }>;
    expect(approval.action).toBe("node:tree");
    const approving = decide(app, admin.apiKey, approval.id, "approve");
    const started = await device.waitFor((e) => e.event === "started");
    const marker = started.marker as string;
    const pids = await waitUntil(() => {
      const found = listMarkedProcesses(marker);
      return found.length >= 4 ? found : null;
    }, 30_000, "the device tree");

    expect((await cancel(env.id, "user changed their mind")).status).toBe(200);
    await waitUntil(() => listMarkedProcesses(marker).length === 0 && alive(pids).length === 0, 30_000, "every device child to be gone");
    await device.waitFor((e) => e.event === "revoke_run" && e.runId === env.id);
    await device.waitFor((e) => e.event === "result" && e.cancelled === true);
    expect((await approving).status).toBe(200);
    const after = await ok200(await getResponse(app, member.apiKey, env.id, env.sessionId));
    expect(after.status).toBe("cancelled");

    // The revoked run cannot reach the device any more, whatever path asks.
    const hub = app.deps.devices;
    await expect(hub?.invoke(deviceId, { runId: env.id, command: "uptime", args: [], timeoutMs: 5000 }, new AbortController().signal)).rejects.toBeInstanceOf(RunRevokedError);
    // A barrier: a command of another run, sent after the refusal on the same (ordered) socket. Once
    // the device has logged it, any invoke sent before it would have been logged first.
    const barrier = await hub?.invoke(deviceId, { runId: `run_barrier_${env.id}`, command: "uptime", args: [], timeoutMs: 30_000 }, new AbortController().signal);
    expect(barrier?.kind).toBe("result");
    await device.waitFor((e) => e.event === "invoke" && e.runId === `run_barrier_${env.id}`);
    expect(device.events.filter((e) => e.event === "invoke" && e.runId === env.id)).toHaveLength(1);
  });

  it("a node command timeout kills its whole tree on the device", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "full", admin.apiKey);
    // Generous, so the whole tree is up (the test watches it form) before the timeout fires.
    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("worker", "tree", { timeoutMs: 5000 }), { text: "done" }]);
    const approval = env.requiredAction as Extract<TRequiredAction, { type: "human_approval" }>;
    const approving = decide(app, admin.apiKey, approval.id, "approve");
    const sent = await device.waitFor((e) => e.event === "invoke" && e.runId === env.id);
    const started = await device.waitFor((e) => e.event === "started" && e.id === sent.id);
    const pids = await waitUntil(() => {
      const found = listMarkedProcesses(started.marker as string);
      return found.length >= 4 ? found : null;
    }, 30_000, "the device tree");
    const done = await ok200(await approving);
    expect(done.status).toBe("completed");
    const [result] = toolResults(done);
    expect(result?.output).toMatchObject({ timedOut: true });
    const [invoked] = await rows<{ data: { marker: string; timedOut: boolean } }>(app, `select data from response_events where response_id = '${env.id}' and type = 'device.invoked'`);
    expect(invoked?.data.timedOut).toBe(true);
    expect(invoked?.data.marker).toMatch(/^[0-9a-f]{32}$/);
    expect(invoked?.data.marker).toBe(started.marker);
    expect(listMarkedProcesses(invoked?.data.marker as string)).toEqual([]);
    await waitUntil(() => alive(pids).length === 0, 30_000, "every device child to be gone");
  });
});
