import type { ServerResponse } from "node:http";
import { DomainError, type TDomainErrorCode } from "../../core/errors";

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
  expired: 409,
  binding_changed: 409,
  conflict: 409,
  capacity: 503,
  timeout: 504,
  internal: 500,
};

/** Normalizes anything thrown into a DomainError; unknown errors become a generic 500 without internals. */
export function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  return new DomainError("internal", "Something went wrong on the server; the request was not applied.");
}

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
    ...headers,
  });
  res.end(payload);
}

/** Sends `{"detail","code"}` with the status of the error's code. */
export function sendError(res: ServerResponse, error: unknown): void {
  const domain = toDomainError(error);
  sendJson(res, HTTP_STATUS[domain.code], { detail: domain.message, code: domain.code });
}
