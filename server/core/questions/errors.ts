import { errorReasonSentence, type TErrorReason } from "../error-reasons";
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

/**
 * A question error: a DomainError (for HTTP/tRPC tables) that also carries the gateway reason.
 * `message` is the English sentence, or a reason code the console words (its English sentence is the message).
 */
export class QuestionError extends DomainError {
  readonly reason: TQuestionErrorReason;
  readonly details: Record<string, unknown>;
  constructor(reason: TQuestionErrorReason, message: string | TErrorReason, details: Record<string, unknown> = {}) {
    super(DOMAIN_CODE[reason], typeof message === "string" ? message : errorReasonSentence(message), typeof message === "string" ? null : message);
    this.name = "QuestionError";
    this.reason = reason;
    this.details = details;
  }
}
