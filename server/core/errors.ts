import { errorReasonSentence, type TErrorReason, type TNotFoundKind } from "./error-reasons";

/** The closed set of domain error codes; each transport maps them to its own status table. */
export const DOMAIN_ERROR_CODES = [
  "unauthenticated",
  "forbidden",
  "not_found",
  "invalid_request",
  "invalid_json",
  "payload_too_large",
  "unsupported_media_type",
  "validation_failed",
  "already_decided",
  "already_submitted",
  "already_consumed",
  "not_approved",
  "expired",
  "binding_changed",
  "conflict",
  "method_not_allowed",
  "capacity",
  "rate_limited",
  "too_many_streams",
  "timeout",
  "request_timeout",
  "internal",
] as const;

export type TDomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

/** An error a user can act on; `message` is a sentence shown as `detail`. */
export class DomainError extends Error {
  readonly code: TDomainErrorCode;
  /** Why, as a code the console words in the viewer's language (none: only the English `message`). */
  readonly serverText: TErrorReason | null;
  constructor(code: TDomainErrorCode, message: string, serverText: TErrorReason | null = null) {
    super(message);
    this.name = "DomainError";
    this.code = code;
    this.serverText = serverText;
  }
}

/** A DomainError whose `detail` is the English sentence of its reason code. */
export const refused = (code: TDomainErrorCode, reason: TErrorReason): DomainError => new DomainError(code, errorReasonSentence(reason), reason);

/** Shorthand for the common 404 that must not reveal whether the object exists for someone else. */
export const notFound = (what: TNotFoundKind, id: string): DomainError => refused("not_found", { code: "notFound", params: { what, id } });
