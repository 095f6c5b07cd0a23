import { DomainError, type TDomainErrorCode } from "../errors";
import type { TQuestionErrorReason } from "./schema";

const DOMAIN_CODE: Record<TQuestionErrorReason, TDomainErrorCode> = {
  QUESTION_NOT_FOUND: "not_found",
  QUESTION_ALREADY_TERMINAL: "conflict",
  QUESTION_ID_IN_USE: "conflict",
  QUESTION_INVALID_ANSWER: "validation_failed",
  QUESTION_REQUESTER_INACTIVE: "conflict",
  INVALID_PARAMS: "invalid_request",
  UNAVAILABLE: "capacity",
};

/** A question error: a DomainError (for HTTP/tRPC tables) that also carries the gateway reason. */
export class QuestionError extends DomainError {
  readonly reason: TQuestionErrorReason;
  readonly details: Record<string, unknown>;
  constructor(reason: TQuestionErrorReason, message: string, details: Record<string, unknown> = {}) {
    super(DOMAIN_CODE[reason], message);
    this.name = "QuestionError";
    this.reason = reason;
    this.details = details;
  }
}
