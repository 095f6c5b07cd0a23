import type { IncomingMessage, ServerResponse } from "node:http";
import { DomainError } from "../../core/errors";
import { HTTP_STATUS } from "../shared/errors";
import { sendJson } from "../shared/respond";

/**
 * After the 408 has been handed to the socket, how long a client that keeps trickling is given to
 * read it before the connection is cut (a reset right away could destroy the answer unread).
 */
const LINGER_MS = 1000;

/**
 * Bounds how long a request's body may take to arrive, from the moment its headers did: past the
 * bound it gets 408 `{"detail","code":"request_timeout"}` and its connection is closed. A handler
 * still waiting for that body never sees it, so nothing is written. Node's own `requestTimeout`
 * cannot do this: its check runs only every 30 s and answers a bare 408 without a body.
 */
export function armBodyDeadline(req: IncomingMessage, res: ServerResponse, timeoutMs: number): void {
  const hasBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
  if (!hasBody) return;
  const timer = setTimeout(() => {
    if (req.complete || req.socket.destroyed) return;
    const seconds = Math.round(timeoutMs / 100) / 10;
    const error = new DomainError("request_timeout", `The request body did not arrive within ${seconds} seconds; send it again in one piece.`);
    if (!res.headersSent) sendJson(res, HTTP_STATUS[error.code], { detail: error.message, code: error.code }, { connection: "close" });
    else if (!res.writableEnded) res.end();
    // Also when the handler answered without reading the body: the connection stays only while the body keeps arriving.
    const socket = req.socket;
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  }, timeoutMs);
  timer.unref();
  const stop = () => clearTimeout(timer);
  req.once("end", stop);
  res.once("close", () => {
    if (req.complete) stop();
  });
}
