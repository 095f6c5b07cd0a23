import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { CLOSE_REVOKED } from "../../server/devices/protocol";
import { listMarkedProcesses } from "../../server/tools/run-command";
import { DeviceProcess } from "./devices-helpers";
import { waitUntil } from "./helpers";

/**
 * The device against a fake server that asks for anything: the device's allowlist, consent,
 * deny patterns and run revocations hold whatever the server sends.
 */
let http: Server;
let wss: WebSocketServer;
let url: string;
let socket: WebSocket | null = null;
const received: Array<Record<string, unknown>> = [];
let device: DeviceProcess;
const workdir = mkdtempSync(join(tmpdir(), "cs-device-cwd-"));

const send = (frame: Record<string, unknown>) => socket?.send(JSON.stringify(frame));
const answer = (id: string, type?: string) => waitUntil(() => received.find((f) => f.id === id && (type ? f.type === type : f.type !== "started")), 15_000, `answer to ${id}`);

beforeAll(async () => {
  http = createServer();
  wss = new WebSocketServer({ server: http, path: "/v1/devices/connect" });
  wss.on("connection", (ws) => {
    socket = ws;
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Record<string, unknown>;
      received.push(frame);
      if (frame.type === "pair") {
        ws.send(JSON.stringify({ type: "paired", deviceId: "dev_fake", name: "fake", credential: "csdev_fake" }));
        ws.send(JSON.stringify({ type: "ready", deviceId: "dev_fake", name: "fake" }));
      }
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  device = DeviceProcess.start(url, ["--pair", "cspair_fake", "--allow", "echo=echo", "--allow", "tree=echo $COUNTERSIGN_PROCESS_MARKER; setsid sleep 60 & sleep 60 & wait", "--deny-pattern", "^/etc"], { cwd: workdir });
  await device.waitFor((e) => e.event === "ready");
});
afterAll(async () => {
  await device?.stop();
  wss?.close();
  http?.close();
});

describe("device process: local enforcement", () => {
  it("declares its allowlist and policy when it pairs", () => {
    expect(received[0]).toEqual({ type: "pair", token: "cspair_fake", commands: ["echo", "tree"], consent: "allow", denyPatterns: 1, version: 1 });
  });

  it("refuses a command outside its allowlist even though the server asks", async () => {
    send({ type: "invoke", id: "i1", runId: "run_a", command: "rm", args: ["-rf", "/"], timeoutMs: 5000 });
    expect(await answer("i1")).toMatchObject({ type: "refused", reason: "not_allowlisted" });
  });

  it("refuses arguments matching its deny pattern, and never lets arguments become shell syntax", async () => {
    send({ type: "invoke", id: "i2", runId: "run_a", command: "echo", args: ["/etc/shadow"], timeoutMs: 5000 });
    expect(await answer("i2")).toMatchObject({ type: "refused", reason: "policy" });
    send({ type: "invoke", id: "i3", runId: "run_a", command: "echo", args: ["$(id)", "a;b"], timeoutMs: 5000 });
    expect(await answer("i3")).toMatchObject({ type: "result", exitCode: 0, stdout: "$(id) a;b\n" });
  });

  it("a cancel from the server stops the command's whole tree", async () => {
    send({ type: "invoke", id: "i4", runId: "run_b", command: "tree", args: [], timeoutMs: 60_000 });
    const started = (await answer("i4", "started")) as { marker: string };
    await waitUntil(() => listMarkedProcesses(started.marker).length >= 3, 30_000, "the tree");
    send({ type: "cancel", id: "i4" });
    expect(await answer("i4")).toMatchObject({ type: "result", cancelled: true, marker: started.marker });
    await waitUntil(() => listMarkedProcesses(started.marker).length === 0, 30_000, "the tree to die");
  });

  it("a revoked run stops its tree and starts nothing new on the device, while other runs go on", async () => {
    send({ type: "invoke", id: "i5", runId: "run_c", command: "tree", args: [], timeoutMs: 60_000 });
    const started = (await answer("i5", "started")) as { marker: string };
    await waitUntil(() => listMarkedProcesses(started.marker).length >= 3, 30_000, "the tree");
    send({ type: "revoke_run", runId: "run_c" });
    expect(await answer("i5")).toMatchObject({ type: "result", cancelled: true });
    await waitUntil(() => listMarkedProcesses(started.marker).length === 0, 30_000, "the tree to die");
    send({ type: "invoke", id: "i6", runId: "run_c", command: "echo", args: ["again"], timeoutMs: 5000 });
    expect(await answer("i6")).toMatchObject({ type: "refused", reason: "run_revoked" });
    send({ type: "invoke", id: "i7", runId: "run_d", command: "echo", args: ["other"], timeoutMs: 5000 });
    expect(await answer("i7")).toMatchObject({ type: "result", exitCode: 0, stdout: "other\n" });
  });

  it("a device timeout stops the whole tree", async () => {
    // Generous, so the whole tree is up (watched forming) before the timeout fires on a loaded machine.
    send({ type: "invoke", id: "i8", runId: "run_e", command: "tree", args: [], timeoutMs: 5000 });
    const started = (await answer("i8", "started")) as { marker: string };
    await waitUntil(() => listMarkedProcesses(started.marker).length >= 3, 30_000, "the tree");
    expect(await answer("i8")).toMatchObject({ type: "result", timedOut: true });
    expect(listMarkedProcesses(started.marker)).toEqual([]);
  });

  it("exits non-zero when the server revokes it, stopping what it ran", async () => {
    send({ type: "invoke", id: "i9", runId: "run_f", command: "tree", args: [], timeoutMs: 60_000 });
    const started = (await answer("i9", "started")) as { marker: string };
    await waitUntil(() => listMarkedProcesses(started.marker).length >= 3, 30_000, "the tree");
    send({ type: "error", code: "revoked", message: "This device's pairing was revoked by an admin." });
    socket?.close(CLOSE_REVOKED, "Device revoked");
    expect(await device.exited).toBe(1);
    expect(device.stderr).toMatch(/revoked by an admin/);
    expect(listMarkedProcesses(started.marker)).toEqual([]);
  });
});
