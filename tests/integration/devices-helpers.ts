import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { BUILTIN_AGENTS } from "../../server/agents/catalog";
import type { TTestApp } from "../../server/testing/test-app";
import { invoke, ok200, script, type TBody, type TScriptTurn } from "./helpers";

export type TTrpcReply = {
  status: number;
  body: { result?: { data: unknown }; error?: { message: string; data: { code: string; httpStatus: number; domainCode: string | null } } };
};

/** A tRPC query over HTTP GET with an API key. */
export async function trpcGet(app: TTestApp, key: string, path: string, input?: unknown): Promise<TTrpcReply> {
  const qs = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  const res = await fetch(`${app.url}/api/trpc/${path}${qs}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as TTrpcReply["body"] };
}

/** A tRPC mutation over HTTP POST with an API key. */
export async function trpcPost(app: TTestApp, key: string, path: string, input: unknown): Promise<TTrpcReply> {
  const res = await fetch(`${app.url}/api/trpc/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  return { status: res.status, body: (await res.json()) as TTrpcReply["body"] };
}

/** The data of a successful tRPC call. */
export function data<T = Record<string, unknown>>(reply: TTrpcReply): T {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body.result?.data as T;
}

/** Creates a pairing (admin) and returns its token. */
export async function createPairing(app: TTestApp, adminKey: string, name: string): Promise<{ deviceId: string; token: string; expiresAt: string; name: string }> {
  return data(await trpcPost(app, adminKey, "devices.createPairing", { name }));
}

type TDeviceEvent = { event: string; [key: string]: unknown };

/** A real device process (`node --import tsx server/device/main.ts ...`). */
export class DeviceProcess {
  readonly events: TDeviceEvent[] = [];
  stderr = "";
  readonly exited: Promise<number | null>;
  private buffer = "";

  private constructor(
    readonly child: ChildProcess,
    readonly stateFile: string,
  ) {
    child.stdout?.on("data", (d: Buffer) => {
      this.buffer += d.toString();
      let at = this.buffer.indexOf("\n");
      while (at >= 0) {
        const line = this.buffer.slice(0, at);
        this.buffer = this.buffer.slice(at + 1);
        at = this.buffer.indexOf("\n");
        try {
          this.events.push(JSON.parse(line) as TDeviceEvent);
        } catch {}
      }
    });
    child.stderr?.on("data", (d: Buffer) => {
      this.stderr += d.toString();
    });
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  /** Starts a device against `server` with its own state file (unless given) and the given flags. */
  static start(server: string, args: string[], opts: { stateFile?: string; cwd?: string } = {}): DeviceProcess {
    const stateFile = opts.stateFile ?? join(mkdtempSync(join(tmpdir(), "cs-device-")), "state.json");
    const child = spawn(process.execPath, ["--import", "tsx", "server/device/main.ts", "--server", server, "--state", stateFile, ...(opts.cwd ? ["--cwd", opts.cwd] : []), ...args], {
      cwd: process.cwd(),
      env: { ...process.env, NODE_OPTIONS: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    return new DeviceProcess(child, stateFile);
  }

  /** Pairs a new device with a fresh token and waits until it is ready. */
  static async paired(app: TTestApp, adminKey: string, name: string, args: string[], opts: { cwd?: string } = {}): Promise<{ device: DeviceProcess; deviceId: string }> {
    const pairing = await createPairing(app, adminKey, name);
    const device = DeviceProcess.start(app.url, ["--pair", pairing.token, ...args], opts);
    await device.waitFor((e) => e.event === "ready");
    return { device, deviceId: pairing.deviceId };
  }

  async waitFor(pred: (e: TDeviceEvent) => boolean, timeoutMs = 20_000): Promise<TDeviceEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(pred);
      if (found) return found;
      if (this.child.exitCode !== null) throw new Error(`device exited (${this.child.exitCode}) before the expected event: ${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for a device event; got ${JSON.stringify(this.events)} ${this.stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill("SIGTERM");
    await this.exited;
  }
}

/** A one-call `node_invoke` script followed by a closing text. */
export const nodeTurn = (device: string, command: string, extra: { args?: string[]; timeoutMs?: number } = {}): TScriptTurn => ({
  toolCalls: [{ name: "node_invoke", arguments: { device, command, ...extra } }],
});

/**
 * Creates a session of the scripted-device agent for `key`'s user. Full access is granted with
 * `granterKey`, an operator's or admin's: members cannot grant it, not even to themselves.
 */
export async function deviceSession(app: TTestApp, key: string, access: "default" | "full", granterKey?: string): Promise<string> {
  const env = await invoke(app, key, script([{ text: "hello" }]), { agent: "scripted-device" });
  expect(env.status).toBe("completed");
  if (access === "full") {
    if (!granterKey) throw new Error("Full access needs an operator's or admin's key to grant it.");
    data(await trpcPost(app, granterKey, "sessions.setAccess", { sessionId: env.sessionId, access }));
  }
  return env.sessionId;
}

/** Runs a scripted-device response in a session. */
export async function runDeviceScript(app: TTestApp, key: string, sessionId: string, turns: TScriptTurn[], agent = "scripted-device"): Promise<TBody> {
  return ok200(await app.api("/v1/responses", { key, body: { input: script(turns), sessionId, agent } }));
}

/** The tool results of an envelope, by call id. */
export const toolResults = (env: TBody): Array<{ callId: string; output: Record<string, unknown> }> =>
  (env.output as Array<{ type: string; callId?: string; output?: unknown }>)
    .filter((i) => i.type === "tool_result")
    .map((i) => ({ callId: i.callId as string, output: i.output as Record<string, unknown> }));

/** The scripted-device agent's live config (tests mutate its declaration and restore it). */
export const deviceAgent = () => {
  const agent = BUILTIN_AGENTS.find((a) => a.name === "scripted-device");
  if (!agent) throw new Error("scripted-device agent is not configured");
  return agent;
};
