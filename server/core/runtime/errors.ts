import { DomainError, type TDomainErrorCode } from "../errors";

/** The closed set of attempt-runtime failure codes. */
export const ATTEMPT_RUNTIME_ERROR_CODES = [
  "admission_closed",
  "attempt_cancelled",
  "invalid_lifecycle_transition",
  "invalid_middleware_registration",
  "injection_revoked",
] as const;

export type TAttemptRuntimeErrorCode = (typeof ATTEMPT_RUNTIME_ERROR_CODES)[number];

/** Each runtime code mapped once to the domain code the transports already know how to render. */
export const ATTEMPT_RUNTIME_DOMAIN_CODES = {
  admission_closed: "conflict",
  attempt_cancelled: "conflict",
  invalid_lifecycle_transition: "internal",
  invalid_middleware_registration: "internal",
  injection_revoked: "conflict",
} as const satisfies Record<TAttemptRuntimeErrorCode, TDomainErrorCode>;

/** A runtime helper refused something; `runtimeCode` is precise, `code` is the transport-facing domain code. */
export class AttemptRuntimeError extends DomainError {
  readonly runtimeCode: TAttemptRuntimeErrorCode;
  constructor(runtimeCode: TAttemptRuntimeErrorCode, message: string) {
    super(ATTEMPT_RUNTIME_DOMAIN_CODES[runtimeCode], message);
    this.name = "AttemptRuntimeError";
    this.runtimeCode = runtimeCode;
  }
}

/** Work was offered after the attempt froze admission (terminal boundary or cancellation). */
export class AdmissionClosedError extends AttemptRuntimeError {
  constructor(message: string) {
    super("admission_closed", message);
    this.name = "AdmissionClosedError";
  }
}

/** A registration of a lifecycle phase that would move the attempt backwards. */
export class LifecycleTransitionError extends AttemptRuntimeError {
  constructor(message: string) {
    super("invalid_lifecycle_transition", message);
    this.name = "LifecycleTransitionError";
  }
}

/** A tool-result middleware registration that its plugin manifest or the host does not allow. */
export class MiddlewareRegistrationError extends AttemptRuntimeError {
  constructor(message: string) {
    super("invalid_middleware_registration", message);
    this.name = "MiddlewareRegistrationError";
  }
}

/** An injection's host assertion (or the live-run check) failed at a guarded boundary. */
export class InjectionRevokedError extends AttemptRuntimeError {
  constructor(message = "The input's source is no longer current; it was not delivered.") {
    super("injection_revoked", message);
    this.name = "InjectionRevokedError";
  }
}
