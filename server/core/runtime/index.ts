/** The attempt runtime: framework-free helpers a harness calls while an attempt runs and as it finalizes. */
export { type TAgentEndHook, type TAgentEndSideEffects, type TAgentEndSideEffectsParams, awaitAgentEndSideEffects, runAgentEndSideEffects } from "./agent-end";
export { AttemptCancelledError, CANCELLATION_KINDS, type TAttemptCancellation, type TCancellationKind, type TCancellationReason, createAttemptCancellation } from "./cancellation";
export {
  type TAttemptDeadlineController,
  type TAttemptDeadlineOptions,
  type TAttemptDeadlineState,
  type TAttemptTimeoutKind,
  type TTimerHandle,
  createAttemptDeadlineController,
} from "./deadline";
export {
  ATTEMPT_RUNTIME_DOMAIN_CODES,
  ATTEMPT_RUNTIME_ERROR_CODES,
  AdmissionClosedError,
  AttemptRuntimeError,
  InjectionRevokedError,
  LifecycleTransitionError,
  MiddlewareRegistrationError,
  type TAttemptRuntimeErrorCode,
} from "./errors";
export { type TAttemptObserver, type TObserverErrorReporter, emitAttemptEvent } from "./events";
export {
  INJECTION_AUTHORITY_KINDS,
  type TAssertCurrent,
  type TGuardVerdict,
  type TInjectionAuthorityKind,
  type TInjectionGuard,
  type TInjectionSettlement,
  type TMessageInjectionV2,
  type TPendingInputCancel,
  type TPendingInputClaim,
  type TPendingInputOptions,
  type TQueueMessageOptions,
  type TQueueMessageResult,
  assertInjectionRequest,
  createInjectionGuard,
  isAssertionCurrent,
} from "./injection-guard";
export { ATTEMPT_PHASES, type TAttemptLifecycle, type TAttemptLifecycleEvent, type TAttemptLifecycleOptions, type TAttemptPhase, createAttemptLifecycle } from "./lifecycle";
export {
  DEFAULT_TOOL_RESULT_RUNTIMES,
  type TAppliedToolResult,
  type TToolResultInput,
  type TToolResultMiddleware,
  type TToolResultMiddlewareEvent,
  type TToolResultMiddlewareFailure,
  type TToolResultMiddlewareRegistration,
  type TToolResultMiddlewareRegistry,
  type TToolResultMiddlewareRegistryOptions,
  type TToolResultPatch,
  createToolResultMiddlewareRegistry,
} from "./middleware";
export { type TToolResultMiddlewareOptions, type TToolResultMiddlewarePlugin, canonicalToolName, isCanonicalId } from "./middleware-registration";
export { SILENT_REPLY_TOKEN, type TTerminalOutcome, type TTerminalOutcomeInput, classifyTerminalOutcome } from "./outcome";
export { type TOutputTokenUsageEvent, type TReportOutputTokens, type TRunUsageAccumulator, type TRunUsageAccumulatorOptions, createRunUsageAccumulator } from "./usage";
