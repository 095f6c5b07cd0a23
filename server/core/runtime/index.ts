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
  SourceBoundInjectionUnsupportedError,
  type TAttemptRuntimeErrorCode,
  UnguardedPendingInputCommitError,
} from "./errors";
export { type TAttemptObserver, type TObserverErrorReporter, emitAttemptEvent } from "./events";
export {
  INJECTION_AUTHORITY_KINDS,
  type TAssertCurrent,
  type TInjectionAuthorityKind,
  type TInjectionFailure,
  type TInjectionItem,
  type TInjectionSettlement,
  type TMessageInjectionV2,
  type TQueueMessageOptions,
  type TQueueMessageResult,
} from "./injection-guard";
export { type TInjectionQueue, type TInjectionQueueOptions, createInjectionQueue } from "./injection-queue";
export {
  type TGuardedInjectionRequest,
  type TMessageInjectionV1,
  type TV1InjectionOptions,
  type TV1QueueMessageOptions,
  createV1Injection,
  queueGuardedInjection,
} from "./injection-v1";
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
export type { TCommitted, TGuardedCommit, TPendingInputOptions, TPendingInputOutcome, TPendingInputPort } from "./pending-input";
export { type TOutputTokenUsageEvent, type TReportOutputTokens, type TRunUsageAccumulator, type TRunUsageAccumulatorOptions, createRunUsageAccumulator } from "./usage";
