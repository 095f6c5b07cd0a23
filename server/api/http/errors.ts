import { STATUS_CODES, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { httpErrorOf } from "../shared/errors";
import { sendJson } from "../shared/respond";

/** Sends `{"detail","code"}` with the status of the error's code (the mapping: server/api/shared/errors.ts). */
export function sendError(res: ServerResponse, error: unknown): void {
  const { status, body } = httpErrorOf(error);
  sendJson(res, status, body);
}

/** Refuses a WebSocket upgrade before the handshake: a plain HTTP answer with a JSON body and `Retry-After`, then the socket closes. */
export function refuseUpgradeWith(socket: Duplex, status: number, body: unknown, retryAfter: number): void {
  const payload = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nRetry-After: ${retryAfter}\r\nConnection: close\r\n\r\n${payload}`,
  );
}
