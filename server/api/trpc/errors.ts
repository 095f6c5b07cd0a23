import { TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/unstable-core-do-not-import";
import type { DomainError, TDomainErrorCode } from "../../core/errors";

/** The one table mapping domain error codes to tRPC codes. */
const TRPC_CODE: Record<TDomainErrorCode, TRPC_ERROR_CODE_KEY> = {
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

/** A DomainError (or an unreachable database) as the TRPCError with the table's code. */
export function toTrpcError(cause: DomainError): TRPCError {
  return new TRPCError({ code: TRPC_CODE[cause.code], message: cause.message, cause });
}
