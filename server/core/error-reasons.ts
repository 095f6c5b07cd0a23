import { refusalSentence, type TDecisionRefusal } from "./separation-of-duties";

/**
 * Why the server refused a request, as a code and its parameters beside the English sentence it
 * sends as `detail`: the console words the code in the viewer's language (`serverText.*` in its
 * catalogues) and shows the English sentence only for a refusal that has no code. The decision
 * refusals of the separation-of-duties rule are among them, with their own codes.
 */
export type TErrorReason =
  | TDecisionRefusal
  | { code: "roleCannot"; params: { act: "steer" | "cancel" | "revokeGrants" | "answer" } }
  | { code: "bulkNotYours"; params: { n: number }; refusal: TDecisionRefusal }
  | { code: "bulkHighRisk"; params: { n: number } }
  | { code: "alreadyDecided"; params: { status: "approved" | "denied" } }
  | { code: "approvalExpired" }
  | { code: "approvalCancelled" }
  | { code: "otherResponse" }
  | { code: "bindingChanged" }
  | { code: "notWaiting" }
  | { code: "alreadyVoted" }
  | { code: "quorumAsAsked"; params: { n: number } }
  | { code: "notEditable"; params: { tool: string } }
  | { code: "editInvalid"; params: { tool: string; issues: string } }
  | { code: "grantNoSession"; params: { agent: string } }
  | { code: "grantNoDays"; params: { agent: string } }
  | { code: "grantMaxDays"; params: { agent: string; max: number } }
  | { code: "grantRevoked" }
  | { code: "responseClosed"; params: { status: string; act: "cancel" | "steer" } };

export type TErrorReasonCode = TErrorReason["code"];

/** The server's own (English) sentence of a refusal: the `detail` of its error, for API clients and logs. */
export function errorReasonSentence(reason: TErrorReason): string {
  switch (reason.code) {
    case "auditor":
    case "othersRuns":
    case "notApprover":
    case "ownQuorum":
    case "ownRun":
      return refusalSentence(reason);
    case "roleCannot":
      return `Your role cannot ${{ steer: "steer responses", cancel: "cancel responses", revokeGrants: "revoke grants", answer: "answer questions" }[reason.params.act]}.`;
    case "bulkNotYours":
      return `${reason.params.n === 1 ? "One of these approvals is" : `${reason.params.n} of these approvals are`} not for you to decide, so nothing was decided: ${refusalSentence(reason.refusal)}`;
    case "bulkHighRisk":
      return `High-risk approvals cannot be decided in bulk; decide ${reason.params.n === 1 ? "it" : `these ${reason.params.n}`} one by one.`;
    case "alreadyDecided":
      return `This approval was already ${reason.params.status}; a decision is used once.`;
    case "approvalExpired":
      return "This approval has expired; the operation was not run.";
    case "approvalCancelled":
      return "The response was cancelled; this approval can no longer be decided.";
    case "otherResponse":
      return "This approval belongs to a different response; the decision was not applied.";
    case "bindingChanged":
      return "The pending operation no longer matches what was approved; the decision was not applied.";
    case "notWaiting":
      return "The response is no longer waiting for this approval.";
    case "alreadyVoted":
      return "You already voted on this approval; each person votes once, and it needs approvals from other people.";
    case "quorumAsAsked":
      return `This approval needs ${reason.params.n} approvals from different people, so it cannot be edited or carry a standing grant; approve it as asked or deny it.`;
    case "notEditable":
      return `The arguments of ${reason.params.tool} cannot be edited here; approve or deny it as asked.`;
    case "editInvalid":
      return `The edited arguments are not valid for ${reason.params.tool}: ${reason.params.issues}. Nothing was approved.`;
    case "grantNoSession":
      return `The agent ${reason.params.agent} does not allow standing grants for a session.`;
    case "grantNoDays":
      return `The agent ${reason.params.agent} does not allow standing grants for days.`;
    case "grantMaxDays":
      return `The agent ${reason.params.agent} allows standing grants of at most ${reason.params.max} days.`;
    case "grantRevoked":
      return "This grant was already revoked.";
    case "responseClosed":
      return reason.params.act === "cancel" ? `The response is already ${reason.params.status}; it cannot be cancelled.` : `The response is already ${reason.params.status}; steering is closed.`;
  }
}
