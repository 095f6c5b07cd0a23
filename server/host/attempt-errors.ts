/** Thrown to unwind a harness when the attempt suspended on a committed pending action. */
export class AttemptSuspended extends Error {}
/** Thrown to unwind a harness when a decision, cancel or expiry already settled the response (or another host adopted it). */
export class AttemptTerminated extends Error {}
