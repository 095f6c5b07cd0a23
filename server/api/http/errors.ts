import { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { DomainError, type TDomainErrorCode } from "../../core/errors";
import type { TErrorBody } from "../../core/wire-frames";

/** The one table mapping domain error codes to HTTP statuses on `/v1`. */
export const HTTP_STATUS: Record<TDomainErrorCode, number> = {
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  invalid_request: 400,
  invalid_json: 400,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  already_decided: 409,
  already_submitted: 409,
  already_consumed: 409,
  not_approved: 409,
  expired: 409,
  binding_changed: 409,
  conflict: 409,
  capacity: 503,
  rate_limited: 429,
  too_many_streams: 429,
  timeout: 504,
  request_timeout: 408,
  internal: 500,
};

const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT", "53300"]);

/** The SQLSTATE of a database error (or of what caused it), if any. */
function databaseCode(error: unknown): string | null {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** Is this (or what caused it) the database being unreachable: refused, reset, shutting down, out of connections? */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && (UNAVAILABLE_CODES.has(code) || /^(08|57P)/.test(code))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

const CLIENT_GONE_CODES = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "ERR_STREAM_PREMATURE_CLOSE"]);

/**
 * Did this request fail only because its client went away (closed the tab, dropped the
 * connection mid-body)? Such failures are routine, not server errors. The socket must be gone
 * too, so a reset of the database connection still counts as a failure.
 */
export function isClientGone(error: unknown, req: IncomingMessage): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const goneError = (typeof code === "string" && CLIENT_GONE_CODES.has(code)) || (error instanceof Error && error.message === "aborted");
  // The socket, not the request (a fully read request counts as destroyed too); a detached one is gone.
  const socket = req.socket as IncomingMessage["socket"] | null;
  return goneError && (!socket || socket.destroyed);
}

/** Normalizes anything thrown into a DomainError; unknown errors become a generic 500 without internals. */
export function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  // Text PostgreSQL refuses (e.g. NUL characters) that slipped past the boundary checks: the caller's input.
  if (databaseCode(error) === "22021" || databaseCode(error) === "22P05") return new DomainError("invalid_request", "The request contains characters that cannot be stored (e.g. NUL).");
  if (isDatabaseUnavailable(error)) {
    return new DomainError("capacity", "The database is unavailable right now; try again shortly (repeating a decision is safe: it is applied at most once).");
  }
  return new DomainError("internal", "Something went wrong on the server; the request was not applied.");
}

/** The `Retry-After` of a 429 whose cause names no time of its own (e.g. too many open streams). */
export const RETRY_AFTER_FALLBACK_SECONDS = 5;

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

/** Sends `{"detail","code"}` with the status of the error's code. */
export function sendError(res: ServerResponse, error: unknown): void {
  const domain = toDomainError(error);
  sendJson(res, HTTP_STATUS[domain.code], { detail: domain.message, code: domain.code } satisfies TErrorBody);
}

/** Refuses a WebSocket upgrade before the handshake: a plain HTTP answer with a JSON body and `Retry-After`, then the socket closes. */
export function refuseUpgradeWith(socket: Duplex, status: number, body: unknown, retryAfter: number): void {
  const payload = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nRetry-After: ${retryAfter}\r\nConnection: close\r\n\r\n${payload}`,
  );
}
