/** Thrown to unwind a harness when the attempt suspended on a committed pending action. */
export class AttemptSuspended extends Error {}
/** Thrown to unwind a harness when a decision, cancel or expiry already settled the response (or another host adopted it). */
export class AttemptTerminated extends Error {}
/**
 * A harness failure with its own machine code (`model_unavailable`, `model_timeout`): the host
 * records it as the response's `error` (an `error` frame and the failed envelope) as given.
 * The message is a sentence for people; it never carries credentials or a stack trace.
 */
export class HarnessFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "HarnessFailure";
  }
}
