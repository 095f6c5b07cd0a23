import type { WebSocket } from "ws";
import type { Logger } from "pino";
import { newId } from "../core/ids";
import type { EventBus } from "../ports/bus";
import type { ProcessCleanup } from "../tools/process-cleanup";
import { CLOSE_REVOKED, type TDeviceFrame, type TRefusalReason, type TServerFrame } from "./protocol";

/** What a device made of one invocation. */
export type TInvokeOutcome =
  | {
      kind: "result";
      exitCode: number | null;
      stdout: string;
      stderr: string;
      timedOut: boolean;
      cancelled: boolean;
      truncated: boolean;
      durationMs: number;
      marker?: string;
    }
  | { kind: "refused"; reason: TRefusalReason; message: string }
  | { kind: "offline"; message: string };

type TPending = { runId: string; settle: (outcome: TInvokeOutcome) => void; started?: { marker: string; pid: number } };

/** How long past its timeout the server waits for a device's answer (and after a cancel). */
const ANSWER_GRACE_MS = 5000;

/** One authenticated device socket. */
export class DeviceConnection {
  readonly pending = new Map<string, TPending>();
  /** Runs that sent commands over this connection (told when they are revoked). */
  readonly runs = new Set<string>();

  constructor(
    readonly deviceId: string,
    readonly name: string,
    private readonly ws: WebSocket,
  ) {}

  get open(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }

  send(frame: TServerFrame): boolean {
    if (!this.open) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  close(code: number, reason: string): void {
    this.ws.close(code, reason);
  }

  /** A frame the device sent after it was authenticated. */
  receive(frame: TDeviceFrame): void {
    const pending = this.pending.get(frame.id);
    if (!pending) return;
    if (frame.type === "started") {
      pending.started = { marker: frame.marker, pid: frame.pid };
      return;
    }
    this.pending.delete(frame.id);
    if (frame.type === "refused") pending.settle({ kind: "refused", reason: frame.reason, message: frame.message });
    else {
      const { type: _type, id: _id, ...result } = frame;
      pending.settle({ kind: "result", ...result, marker: frame.marker ?? pending.started?.marker });
    }
  }

  /** The socket closed: every invocation still waiting fails as offline. */
  drop(message: string): void {
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      pending.settle({ kind: "offline", message });
    }
  }
}

/**
 * The devices connected to this process. A device connects to one replica; a command for a device
 * connected elsewhere reports it offline here.
 */
export class DeviceHub {
  private readonly connections = new Map<string, DeviceConnection>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    deps: { bus: EventBus; log: Logger },
    private readonly processes: ProcessCleanup,
  ) {
    const processCleanup = processes;
    // Cancelling a response revokes its run: no new command starts for it, here or on a device,
    // and every tree it started is stopped through its own cleanup token.
    this.unsubscribe = deps.bus.subscribeWake((responseId, reason) => {
      if (reason !== "cancel") return;
      processCleanup.revoke(responseId, "the response was cancelled");
      void processCleanup.terminateRun(responseId).catch((error: unknown) => deps.log.warn({ err: error, responseId }, "process cleanup failed"));
      this.revokeRun(responseId);
    });
  }

  isOnline(deviceId: string): boolean {
    return this.connections.get(deviceId)?.open ?? false;
  }

  /** Registers an authenticated connection; an older one of the same device is replaced. */
  attach(connection: DeviceConnection, onReplace: (old: DeviceConnection) => void): void {
    const old = this.connections.get(connection.deviceId);
    this.connections.set(connection.deviceId, connection);
    if (old && old !== connection) onReplace(old);
  }

  detach(connection: DeviceConnection, message: string): void {
    if (this.connections.get(connection.deviceId) === connection) this.connections.delete(connection.deviceId);
    connection.drop(message);
  }

  /** Disconnects a revoked device at once; commands waiting on it fail. */
  disconnect(deviceId: string, message: string): void {
    const connection = this.connections.get(deviceId);
    if (!connection) return;
    this.connections.delete(deviceId);
    connection.send({ type: "error", code: "revoked", message });
    connection.close(CLOSE_REVOKED, "Device revoked");
    connection.drop(message);
  }

  /** Tells every device that ran commands for `runId` that the run is revoked. */
  revokeRun(runId: string): void {
    for (const connection of this.connections.values()) {
      if (connection.runs.delete(runId)) connection.send({ type: "revoke_run", runId });
    }
  }

  /**
   * Sends one command to a device and waits for its answer. `signal` (the attempt's) and the
   * run's cleanup token both cancel it on the device, which stops the whole marked tree there.
   */
  async invoke(deviceId: string, request: { runId: string; command: string; args: string[]; timeoutMs: number }, signal: AbortSignal): Promise<TInvokeOutcome> {
    const connection = this.connections.get(deviceId);
    if (!connection?.open) return { kind: "offline", message: "The device is offline (not connected to this server)." };
    const id = newId("inv");
    const token = this.processes.prepare(request.runId, {
      remote: () => {
        if (connection.pending.has(id)) connection.send({ type: "cancel", id });
      },
    });
    try {
      token.assertCurrent();
      return await new Promise<TInvokeOutcome>((resolve) => {
        const timers: NodeJS.Timeout[] = [];
        let done = false;
        const settle = (outcome: TInvokeOutcome) => {
          if (done) return;
          done = true;
          for (const t of timers) clearTimeout(t);
          signal.removeEventListener("abort", onAbort);
          connection.pending.delete(id);
          resolve(outcome);
        };
        const giveUp = (outcome: TInvokeOutcome) => timers.push(setTimeout(() => settle(outcome), ANSWER_GRACE_MS));
        const onAbort = () => {
          void token.terminate();
          giveUp({ kind: "result", exitCode: null, stdout: "", stderr: "", timedOut: false, cancelled: true, truncated: false, durationMs: 0 });
        };
        connection.pending.set(id, { runId: request.runId, settle });
        connection.runs.add(request.runId);
        if (signal.aborted) return onAbort();
        signal.addEventListener("abort", onAbort, { once: true });
        timers.push(
          setTimeout(() => {
            void token.terminate();
            giveUp({ kind: "offline", message: "The device did not answer before the command's timeout." });
          }, request.timeoutMs + ANSWER_GRACE_MS),
        );
        if (!connection.send({ type: "invoke", id, ...request })) settle({ kind: "offline", message: "The device went offline." });
      });
    } finally {
      await this.processes.finalize(token.marker);
    }
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    for (const connection of this.connections.values()) {
      connection.close(1001, "Server stopping");
      connection.drop("The server is stopping.");
    }
    this.connections.clear();
  }
}

