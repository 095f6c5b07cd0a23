import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import WebSocket from "ws";
import { z } from "zod";
import { ProcessCleanup, RunRevokedError, runCommandForRun } from "../tools/process-cleanup";
import { SpawnerUnavailableError, startSpawner, type TSpawner } from "../tools/spawner";
import {
  CLOSE_AUTH_FAILED,
  CLOSE_REPLACED,
  CLOSE_REVOKED,
  DEVICE_PROTOCOL_VERSION,
  type TDeviceFrame,
  type TServerFrame,
  ZServerFrame,
} from "../devices/protocol";
import type { TDeviceOptions } from "./args";
import { decide } from "./policy";

const ZState = z.object({ server: z.string(), deviceId: z.string().min(1), name: z.string(), credential: z.string().min(1) });
type TState = z.infer<typeof ZState>;

/** One JSON line on stdout per thing that happened (tests and operators read them). */
const log = (event: string, data: Record<string, unknown> = {}) => process.stdout.write(`${JSON.stringify({ event, ...data })}\n`);
const fail = (message: string) => process.stderr.write(`countersign-device: ${message}\n`);

function readState(file: string): TState | null {
  if (!existsSync(file)) return null;
  try {
    return ZState.parse(JSON.parse(readFileSync(file, "utf8")));
  } catch {
    return null;
  }
}

/** Writes the credential where only this user can read it, atomically. */
function writeState(file: string, state: TState): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ version: 1, ...state }, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

const wsUrl = (server: string): string => {
  const url = new URL("v1/devices/connect", server.endsWith("/") ? server : `${server}/`);
  url.protocol = url.protocol === "https:" || url.protocol === "wss:" ? "wss:" : "ws:";
  return url.toString();
};

type TRunning = { runId: string; controller: AbortController };

/**
 * The device process: pairs once (or reconnects with its stored credential), then runs the named
 * commands the server asks for, but only those its own allowlist, consent and deny patterns admit.
 * Every command runs in its own process group with a marker; cancel, timeout, a revoked run or a
 * lost connection stop the whole tree. `environment`: the one its owner started it with, which the
 * commands run with. Resolves with the exit code.
 */
export async function runDevice(options: TDeviceOptions, environment: Readonly<Record<string, string | undefined>>): Promise<number> {
  const state = readState(options.state);
  if (!options.pair && !state) {
    fail(`this device is not paired: start it once with --pair TOKEN (an admin creates one in the console); no state in ${options.state}.`);
    return 1;
  }
  const server = options.server ?? state?.server;
  if (!server) {
    fail("--server URL is required.");
    return 2;
  }
  // Commands are forked by a small process of its own, as on the server (server/tools/spawner.ts).
  let spawner: TSpawner;
  try {
    spawner = await startSpawner();
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
    return 1;
  }
  try {
    return await serve(options, server, state, spawner, environment);
  } finally {
    await spawner.stop();
  }
}

async function serve(options: TDeviceOptions, server: string, initial: TState | null, spawner: TSpawner, environment: Readonly<Record<string, string | undefined>>): Promise<number> {
  let state = initial;
  let pairToken = options.pair ?? null;
  const running = new Map<string, TRunning>();
  // This device process's own registry of the command trees it started.
  const processCleanup = new ProcessCleanup();
  let socket: WebSocket | null = null;
  let stopping = false;

  const stopAll = async () => {
    for (const r of running.values()) r.controller.abort();
    await Promise.all([...new Set([...running.values()].map((r) => r.runId))].map((runId) => processCleanup.terminateRun(runId)));
  };
  const onSignal = () => {
    if (stopping) return;
    stopping = true;
    void stopAll().finally(() => {
      socket?.close(1000, "Device stopping");
      process.exit(0);
    });
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);

  const handleInvoke = async (ws: WebSocket, frame: Extract<TServerFrame, { type: "invoke" }>) => {
    const send = (f: TDeviceFrame) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(f));
    };
    log("invoke", { id: frame.id, runId: frame.runId, command: frame.command, args: frame.args });
    const decision = decide(options.policy, frame.command, frame.args);
    if (!decision.ok) {
      log("refused", { id: frame.id, reason: decision.reason, message: decision.message });
      return send({ type: "refused", id: frame.id, reason: decision.reason, message: decision.message });
    }
    const controller = new AbortController();
    running.set(frame.id, { runId: frame.runId, controller });
    try {
      const result = await runCommandForRun(frame.runId, {
        command: decision.shell,
        cwd: options.cwd,
        // A device runs its owner's declared commands on its owner's machine, with the environment the owner started it with.
        env: { ...environment } as Record<string, string>,
        timeoutMs: Math.min(frame.timeoutMs, options.maxTimeoutMs),
        signal: controller.signal,
        spawner,
        onSpawn: ({ pid, marker }) => {
          log("started", { id: frame.id, pid, marker });
          // A device's commands run unconfined, so the spawner always knows their group (null only inside a session sandbox).
          if (pid !== null) send({ type: "started", id: frame.id, pid, marker });
        },
      }, processCleanup);
      log("result", { id: frame.id, exitCode: result.exitCode, timedOut: result.timedOut, cancelled: result.cancelled, marker: result.marker });
      send({
        type: "result",
        id: frame.id,
        exitCode: result.exitCode,
        stdout: result.stdout,
        stderr: result.stderr,
        timedOut: result.timedOut,
        cancelled: result.cancelled,
        truncated: result.truncated,
        durationMs: result.durationMs,
        marker: result.marker,
      });
    } catch (error) {
      if (error instanceof SpawnerUnavailableError) {
        // The outcome is unknown (the spawner stopped the command or never ran it): say so instead of leaving the server waiting.
        log("result", { id: frame.id, exitCode: null, error: error.message });
        const failed = { exitCode: null, stdout: "", stderr: error.message, timedOut: false, cancelled: false, truncated: false, durationMs: 0 };
        return send({ type: "result", id: frame.id, ...failed });
      }
      if (!(error instanceof RunRevokedError)) throw error;
      log("refused", { id: frame.id, reason: "run_revoked" });
      send({ type: "refused", id: frame.id, reason: "run_revoked", message: "the run was revoked; this device starts no new command for it." });
    } finally {
      running.delete(frame.id);
    }
  };

  /** One connection; resolves with an exit code (final) or null (reconnect). */
  const connectOnce = () =>
    new Promise<{ code: number | null; ready: boolean }>((resolve) => {
      const ws = new WebSocket(wsUrl(server));
      socket = ws;
      let ready = false;
      let serverError: { code: string; message: string } | null = null;
      ws.on("open", () => {
        const declaration = {
          commands: [...options.policy.allow.keys()],
          consent: options.policy.consent,
          denyPatterns: options.policy.denyPatterns.length,
          version: DEVICE_PROTOCOL_VERSION,
        };
        if (pairToken) ws.send(JSON.stringify({ type: "pair", token: pairToken, ...declaration }));
        else if (state) ws.send(JSON.stringify({ type: "hello", deviceId: state.deviceId, credential: state.credential, ...declaration }));
      });
      ws.on("message", (data) => {
        let frame: TServerFrame;
        try {
          frame = ZServerFrame.parse(JSON.parse(data.toString()));
        } catch {
          return;
        }
        if (frame.type === "paired") {
          state = { server, deviceId: frame.deviceId, name: frame.name, credential: frame.credential };
          writeState(options.state, state);
          pairToken = null;
          log("paired", { deviceId: frame.deviceId, name: frame.name, state: options.state });
        } else if (frame.type === "ready") {
          ready = true;
          log("ready", { deviceId: frame.deviceId, name: frame.name, commands: [...options.policy.allow.keys()], consent: options.policy.consent });
        } else if (frame.type === "error") {
          serverError = { code: frame.code, message: frame.message };
        } else if (!ready) {
          return;
        } else if (frame.type === "invoke") {
          void handleInvoke(ws, frame).catch((error: unknown) => fail(`command failed: ${error instanceof Error ? error.message : String(error)}`));
        } else if (frame.type === "cancel") {
          const r = running.get(frame.id);
          if (r) {
            log("cancel", { id: frame.id });
            r.controller.abort();
          }
        } else if (frame.type === "revoke_run") {
          log("revoke_run", { runId: frame.runId });
          processCleanup.revoke(frame.runId, "the server revoked the run");
          for (const r of running.values()) if (r.runId === frame.runId) r.controller.abort();
          void processCleanup.terminateRun(frame.runId);
        }
      });
      ws.on("error", () => {});
      ws.on("close", (code, reason) => {
        log("disconnected", { code, reason: reason.toString() });
        // A command whose result can no longer be delivered must not linger.
        void stopAll().finally(() => {
          const err = serverError as { code: string; message: string } | null;
          if (err || code === CLOSE_AUTH_FAILED || code === CLOSE_REVOKED || code === CLOSE_REPLACED || code === 1008) {
            const message = err?.message ?? (reason.toString() || `the server closed the connection (${code}).`);
            fail(err?.code === "pairing_failed" ? `pairing failed: ${message}` : message);
            return resolve({ code: 1, ready });
          }
          resolve({ code: null, ready });
        });
      });
    });

  let delay = 500;
  let failures = 0;
  for (;;) {
    const outcome = await connectOnce();
    if (stopping) return 0;
    if (outcome.code !== null) return outcome.code;
    if (outcome.ready) {
      delay = 500;
      failures = 0;
    } else if (++failures >= 5 && !state) {
      fail(`could not reach ${server}.`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 10_000);
  }
}
