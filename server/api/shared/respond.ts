import type { ServerResponse } from "node:http";
import { RETRY_AFTER_FALLBACK_SECONDS } from "./errors";

/** A JSON answer on a node:http response (both transports serve over node:http); a response already started is only ended. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(payload),
    "cache-control": "no-store",
    // Every 429 tells the client when to come back; limiters that know the exact wait pass their own.
    ...(status === 429 ? { "retry-after": String(RETRY_AFTER_FALLBACK_SECONDS) } : {}),
    ...headers,
  });
  res.end(payload);
}
