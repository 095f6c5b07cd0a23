import type { IncomingMessage } from "node:http";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/unstable-core-do-not-import";
import { DomainError, type TDomainErrorCode } from "../../core/errors";
import type { TErrorBody } from "../../core/wire-frames";

/*
 * Error mapping shared by both transports: what anything thrown means (toDomainError), and the
 * one table per transport from a domain error code to its HTTP status (`/v1`, export, control)
 * and to its tRPC code (`/api/trpc`), side by side so they cannot drift apart.
 */

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

/** The one table mapping domain error codes to tRPC codes. */
export const TRPC_CODE: Record<TDomainErrorCode, TRPC_ERROR_CODE_KEY> = {
  unauthenticated: "UNAUTHORIZED",
  forbidden: "FORBIDDEN",
  not_found: "NOT_FOUND",
  method_not_allowed: "METHOD_NOT_SUPPORTED",
  invalid_request: "BAD_REQUEST",
  invalid_json: "PARSE_ERROR",
  payload_too_large: "PAYLOAD_TOO_LARGE",
  unsupported_media_type: "UNSUPPORTED_MEDIA_TYPE",
  validation_failed: "UNPROCESSABLE_CONTENT",
  already_decided: "CONFLICT",
  already_submitted: "CONFLICT",
  already_consumed: "CONFLICT",
  not_approved: "CONFLICT",
  expired: "CONFLICT",
  binding_changed: "CONFLICT",
  conflict: "CONFLICT",
  capacity: "SERVICE_UNAVAILABLE",
  rate_limited: "TOO_MANY_REQUESTS",
  too_many_streams: "TOO_MANY_REQUESTS",
  timeout: "TIMEOUT",
  request_timeout: "TIMEOUT",
  internal: "INTERNAL_SERVER_ERROR",
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

/** Anything thrown as the HTTP status and `{"detail","code"}` body of the contract. */
export function httpErrorOf(error: unknown): { status: number; body: TErrorBody } {
  const domain = toDomainError(error);
  return { status: HTTP_STATUS[domain.code], body: { detail: domain.message, code: domain.code } };
}

/** The `Retry-After` of a 429 whose cause names no time of its own (e.g. too many open streams). */
export const RETRY_AFTER_FALLBACK_SECONDS = 5;
