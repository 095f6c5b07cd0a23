import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import { DeviceConnection, type DeviceHub } from "../../devices/hub";
import { CLOSE_AUTH_FAILED, CLOSE_REPLACED, CLOSE_REVOKED, type TServerFrame, ZDeviceFrame, ZDeviceHello } from "../../devices/protocol";
import { authenticateDevice, pairWithToken } from "../../devices/store";
import type { TDeps } from "../../host/deps";
import { describeIssues } from "./body";

const HELLO_TIMEOUT_MS = 10_000;
const PING_MS = 15_000;

/**
 * `WS /v1/devices/connect`: paired devices. The first frame pairs (one-time token) or
 * authenticates (device credential); then the socket carries invocations and their results.
 */
export function createDeviceServer(deps: Pick<TDeps, "db" | "log" | "now">, hub: DeviceHub) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024 * 1024 });
  return {
    handleUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      wss.handleUpgrade(req, socket, head, (ws) => acceptDevice(deps, hub, ws));
    },
    close: () => {
      hub.close();
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}

function acceptDevice(deps: Pick<TDeps, "db" | "log" | "now">, hub: DeviceHub, ws: WebSocket): void {
  let connection: DeviceConnection | null = null;
  let authenticating = false;
  const fail = (code: string, message: string, closeCode: number) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: "error", code, message } satisfies TServerFrame));
    ws.close(closeCode, message.slice(0, 120));
  };
  const helloTimer = setTimeout(() => fail("timeout", "Send a pair or hello frame first.", 1008), HELLO_TIMEOUT_MS);
  let alive = true;
  const pinger = setInterval(() => {
    if (!alive) return ws.terminate();
    alive = false;
    ws.ping();
  }, PING_MS);
  ws.on("pong", () => {
    alive = true;
  });
  ws.on("error", () => {});
  ws.on("close", () => {
    clearTimeout(helloTimer);
    clearInterval(pinger);
    if (connection) hub.detach(connection, "The device went offline while the command ran.");
  });
  ws.on("message", (data, isBinary) => {
    let raw: unknown;
    try {
      raw = isBinary ? undefined : JSON.parse(data.toString());
    } catch {
      raw = undefined;
    }
    if (connection) {
      const parsed = ZDeviceFrame.safeParse(raw);
      if (parsed.success) connection.receive(parsed.data);
      else deps.log.warn({ deviceId: connection.deviceId }, "ignored an invalid device frame");
      return;
    }
    if (authenticating) return;
    const hello = ZDeviceHello.safeParse(raw);
    if (!hello.success) return fail("invalid_request", `The first frame must be pair or hello: ${describeIssues(hello.error)}.`, 1008);
    authenticating = true;
    clearTimeout(helloTimer);
    void (async () => {
      const now = deps.now();
      const outcome = hello.data.type === "pair" ? await pairWithToken(deps.db, hello.data, now) : await authenticateDevice(deps.db, hello.data, now);
      if (!outcome.ok) {
        deps.log.info({ code: outcome.code }, "device connection refused");
        return fail(outcome.code, outcome.message, outcome.code === "revoked" ? CLOSE_REVOKED : CLOSE_AUTH_FAILED);
      }
      if (ws.readyState !== ws.OPEN) return;
      const { device } = outcome;
      if ("credential" in outcome) ws.send(JSON.stringify({ type: "paired", deviceId: device.id, name: device.name, credential: outcome.credential }));
      connection = new DeviceConnection(device.id, device.name, ws);
      hub.attach(connection, (old) => {
        old.close(CLOSE_REPLACED, "Replaced by a newer connection of this device");
        old.drop("The device reconnected while the command ran.");
      });
      ws.send(JSON.stringify({ type: "ready", deviceId: device.id, name: device.name } satisfies TServerFrame));
      deps.log.info({ deviceId: device.id, name: device.name, paired: "credential" in outcome }, "device connected");
    })().catch((error: unknown) => {
      deps.log.error({ err: error }, "device authentication failed");
      fail("internal", "The server could not check this device; try again.", 1011);
    });
  });
}
