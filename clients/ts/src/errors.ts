import type { TApproval } from "./types.js";

/** A refused request: the HTTP status and the API's `{detail, code}` (or a Gateway method's reason). */
export class CountersignError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(`${status} ${code}: ${detail}`);
    this.name = "CountersignError";
  }
}

/**
 * The operation must not run: the approval was denied (`message`: the approver's reply, if any),
 * expired, cancelled, or still pending when the wait ran out (`status` says which).
 */
export class ApprovalDenied extends Error {
  readonly approvalId: string;
  readonly status: TApproval["status"];
  readonly reply: string | undefined;

  constructor(
    readonly approval: TApproval,
    text?: string,
  ) {
    super(text ?? approval.message ?? `The approval ${approval.id} was ${approval.status}; the operation was not run.`);
    this.name = "ApprovalDenied";
    this.approvalId = approval.id;
    this.status = approval.status;
    this.reply = approval.message;
  }
}

/**
 * Approved with arguments an approver edited, and the caller refused edits (`acceptEdits: false`):
 * nothing ran and the approval was not consumed. `arguments` are the edited ones, `originalArguments`
 * the requested ones.
 */
export class ApprovalEdited extends ApprovalDenied {
  readonly arguments: unknown;
  readonly originalArguments: unknown;

  constructor(approval: TApproval) {
    super(approval, `An approver edited the arguments of ${approval.id}, and edits are refused (acceptEdits: false); the operation was not run.`);
    this.name = "ApprovalEdited";
    this.arguments = approval.arguments;
    this.originalArguments = approval.originalArguments;
  }
}

/** The error of a non-2xx answer with body `body`. */
export function errorOf(status: number, body: unknown): CountersignError {
  const b = (body ?? {}) as { detail?: unknown; code?: unknown };
  return new CountersignError(status, typeof b.code === "string" ? b.code : "http_error", typeof b.detail === "string" ? b.detail : `HTTP ${status}`);
}
