import type { TReviewerSentence } from "./reviewer-sentences";
import { refusalSentence, type TDecisionRefusal } from "./separation-of-duties";

/**
 * Why the server refused a request, as a code and its parameters beside the English sentence it
 * sends as `detail`: the console words the code in the viewer's language (`serverText.*` in its
 * catalogues) and shows the English sentence only for a refusal that has no code. The decision
 * refusals of the separation-of-duties rule are among them, with their own codes.
 */
export type TErrorReason =
  | TDecisionRefusal
  | { code: "roleCannot"; params: { act: TRoleAct } }
  | { code: "adminOnly"; params: { act: TAdminAct } }
  | { code: "auditorReadOnly"; params: { act: TAuditorAct } }
  | { code: "rolesOnly"; params: { act: "readTrail" | "exportRange" | "grantFullAccess" | "changeAccess" } }
  | { code: "ownAccount"; params: { change: "role" | "disable" | "enable" | "delete" | "offboard" } }
  | { code: "lastAdminRole" }
  | { code: "lastAdmin"; params: { name: string } }
  | { code: "userDeleted"; params: { name: string; change: "role" | "keys" | "disable" | "enable" | "delete" | "rename" | "offboard" | "teams" } }
  | { code: "userStatusIs"; params: { name: string; status: "disabled" | "active" } }
  | { code: "userChanged"; params: { name: string } }
  | { code: "nameTaken"; params: { name: string } }
  | { code: "keyRevoked" }
  | { code: "deviceRevoked"; params: { name: string } }
  | { code: "deviceNameTaken"; params: { name: string } }
  | { code: "editReviewDenied"; params: { risk: string; rationale: string }; reviewer: { code: TReviewerSentence; detail: string | null } | null }
  | { code: "invalidField"; params: { field: string; issue: string } }
  | { code: "answerInvalid"; params: { key: string; message: string } }
  | { code: "questionSettled"; params: { status: string; by: string } }
  | { code: "questionNotFound"; params: { id: string } }
  | { code: "notFound"; params: { what: TNotFoundKind; id: string } }
  | { code: "editCwdRefused"; params: { why: TCwdRefusal; cwd: string } }
  | { code: "roleChanged"; params: { from: string; to: string } }
  | { code: "bulkNotYours"; params: { n: number }; refusal: TDecisionRefusal }
  | { code: "bulkHighRisk"; params: { n: number } }
  | { code: "alreadyDecided"; params: { status: "approved" | "denied" } }
  | { code: "approvalExpired" }
  | { code: "approvalCancelled" }
  | { code: "otherResponse" }
  | { code: "bindingChanged" }
  | { code: "notWaiting" }
  | { code: "notWaitingAction" }
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

/** Why a working directory was refused (`cwd` as the caller wrote it, JSON-quoted). */
export type TCwdRefusal = "noWorkspace" | "nul" | "missing" | "outside" | "notDirectory";

/** The sentence refusing a working directory: one wording for the agent's tool result and a person's edit. */
export function cwdRefusalSentence(why: TCwdRefusal, cwd: string): string {
  switch (why) {
    case "noWorkspace":
      return "The session workspace does not exist.";
    case "nul":
      return "The working directory contains a NUL character.";
    case "missing":
      return `The working directory ${cwd} does not exist in the session workspace.`;
    case "outside":
      return `The working directory ${cwd} is outside the session workspace; commands run only inside it.`;
    case "notDirectory":
      return `The working directory ${cwd} is not a directory.`;
  }
}

/** What a 404 names (it never says whether the object exists for someone else). */
export type TNotFoundKind = "apiKey" | "approval" | "attachment" | "clientToolRequest" | "device" | "grant" | "interrupt" | "response" | "session" | "user";
const NOT_FOUND_KIND: Record<TNotFoundKind, string> = {
  apiKey: "API key",
  approval: "approval",
  attachment: "attachment",
  clientToolRequest: "client-tool request",
  device: "device",
  grant: "grant",
  interrupt: "interrupt",
  response: "response",
  session: "session",
  user: "user",
};

/** What a role may not do ("Your role cannot …"): console procedures limited to some roles, and acts of the decide services. */
export type TRoleAct = "steer" | "cancel" | "revokeGrants" | "answer" | "administer" | "readConfig" | "readWorkspace" | "readTrail" | "change" | "seeDevices";
/** What only an admin may do ("Only an admin can …"). */
export type TAdminAct = "changeRoles" | "setTeams" | "renameUsers" | "disableUsers" | "enableUsers" | "deleteUsers" | "offboardUsers" | "createKeysForOthers" | "pairDevices" | "revokeDevices";
/** What an auditor (read-only) may not do. */
export type TAuditorAct = "createKeys" | "revokeKeys" | "requestApprovals" | "askQuestions" | "invokeAgents" | "runAgents" | "changeAccess";

const ROLE_ACT: Record<TRoleAct, string> = {
  steer: "steer responses",
  cancel: "cancel responses",
  revokeGrants: "revoke grants",
  answer: "answer questions",
  administer: "administer this workspace",
  readConfig: "read the server configuration",
  readWorkspace: "read the whole workspace",
  readTrail: "read the admin trail",
  change: "change anything (auditors are read-only)",
  seeDevices: "see paired devices",
};
const ADMIN_ACT: Record<TAdminAct, string> = {
  changeRoles: "change roles",
  setTeams: "set other people's teams",
  renameUsers: "rename other users",
  disableUsers: "disable users",
  enableUsers: "enable users",
  deleteUsers: "delete users",
  offboardUsers: "offboard users",
  createKeysForOthers: "create API keys for another user",
  pairDevices: "pair devices",
  revokeDevices: "revoke devices",
};
const AUDITOR_ACT: Record<TAuditorAct, string> = {
  createKeys: "Auditors are read-only and cannot create API keys.",
  revokeKeys: "Auditors are read-only and cannot revoke API keys.",
  requestApprovals: "Auditors can read approvals but cannot request them.",
  askQuestions: "Auditors can read questions but cannot ask them.",
  invokeAgents: "Auditors can read trajectories but cannot invoke agents.",
  runAgents: "Auditors can read trajectories but cannot run agents.",
  changeAccess: "Auditors cannot change a session's access.",
};
const ROLES_ONLY = {
  readTrail: "Only admins and auditors can read the admin trail.",
  exportRange: "Only roles that read everything can export a time range.",
  grantFullAccess: "Only an operator or an admin can grant Full access; ask one to grant it to this session.",
  changeAccess: "Only the session's owner, an operator or an admin can change its access.",
} as const;
const USER_DELETED = {
  role: "was deleted; its role no longer changes.",
  keys: "was deleted; deleted users get no new API keys.",
  disable: "was deleted; a deleted user cannot be disabled.",
  enable: "was deleted; a deleted user cannot be enabled.",
  delete: "is already deleted.",
  rename: "was deleted; its name no longer changes.",
  offboard: "was deleted; nothing is left to offboard.",
  teams: "was deleted; its teams no longer change.",
} as const;

/** A schema issue as zod reports it (only what naming the field needs). */
type TInputIssue = { path: readonly PropertyKey[]; message: string; code?: string; keys?: readonly string[] };

/**
 * The `invalidField` reason of a request whose input failed its schema: the first issue's field
 * (its path; the unexpected keys for an unknown one; `input` for the whole input) and zod's own
 * English words for it. Null when there is no issue.
 */
export function invalidFieldReason(issues: readonly TInputIssue[]): Extract<TErrorReason, { code: "invalidField" }> | null {
  const first = issues[0];
  if (!first) return null;
  const path = first.path.map(String).join(".");
  const keys = first.code === "unrecognized_keys" && first.keys?.length ? first.keys.map((k) => (path ? `${path}.${k}` : k)).join(", ") : "";
  return { code: "invalidField", params: { field: keys || path || "input", issue: first.message } };
}

/** The server's own (English) sentence of a refusal: the `detail` of its error, for API clients and logs. */
export function errorReasonSentence(reason: TErrorReason): string {
  switch (reason.code) {
    case "auditor":
    case "othersRuns":
    case "notApprover":
    case "notInTeam":
    case "ownQuorum":
    case "ownRun":
      return refusalSentence(reason);
    case "roleCannot":
      return `Your role cannot ${ROLE_ACT[reason.params.act]}.`;
    case "adminOnly":
      return `Only an admin can ${ADMIN_ACT[reason.params.act]}.`;
    case "auditorReadOnly":
      return AUDITOR_ACT[reason.params.act];
    case "rolesOnly":
      return ROLES_ONLY[reason.params.act];
    case "ownAccount":
      return reason.params.change === "role" ? "You cannot change your own role; ask another admin." : `You cannot ${reason.params.change} your own account; ask another admin.`;
    case "lastAdminRole":
      return "The last admin keeps the admin role.";
    case "lastAdmin":
      return `${reason.params.name} is the last admin; make another user admin first.`;
    case "userDeleted":
      return `${reason.params.name} ${USER_DELETED[reason.params.change]}`;
    case "userStatusIs":
      return reason.params.status === "disabled" ? `${reason.params.name} is already disabled.` : `${reason.params.name} is not disabled.`;
    case "userChanged":
      return `${reason.params.name} changed meanwhile; reload and try again.`;
    case "nameTaken":
      return `Another user already has the display name ${reason.params.name} (names are compared ignoring case, letter width and invisible characters); choose another name.`;
    case "keyRevoked":
      return "This API key is already revoked.";
    case "deviceRevoked":
      return `The device ${reason.params.name} is already revoked.`;
    case "deviceNameTaken":
      return `A device named ${reason.params.name} is already paired or waiting to be paired; revoke it first.`;
    case "editReviewDenied":
      return `The exec reviewer denied the edited operation (${reason.params.risk} risk): ${reason.params.rationale}. Nothing was approved; the request is still pending.`;
    case "invalidField":
      return `The field ${reason.params.field} is not valid: ${reason.params.issue}.`;
    case "answerInvalid":
      return reason.params.message;
    case "questionSettled":
      return `This question is already ${reason.params.status}${reason.params.by ? ` (by ${reason.params.by})` : ""}.`;
    case "questionNotFound":
      return `No question with id ${reason.params.id} was found.`;
    case "notFound":
      return `No ${NOT_FOUND_KIND[reason.params.what]} with id ${reason.params.id} was found.`;
    case "editCwdRefused":
      return `${cwdRefusalSentence(reason.params.why, reason.params.cwd)} Nothing was approved.`;
    case "roleChanged":
      return `The user's role changed from ${reason.params.from} to ${reason.params.to}; reconnect to continue with the new role.`;
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
    case "notWaitingAction":
      return "The response is no longer waiting for this action.";
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
