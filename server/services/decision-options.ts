import { evaluatePredicates } from "../core/agent-policy";
import type { TApprovalRow } from "../../db/repositories/approvals";
import type { AgentRegistry } from "../agents/registry";
import { actionArgumentProblems, actionGate, actionPolicyFor } from "../agents/actions";
import type { TActionPolicy, TAgentConfig } from "../agents/types";
import { MAX_ACTION_ARGUMENTS_BYTES } from "../core/actions";
import { approvalBindingHash, canonicalJson } from "../core/binding";
import type { TGrantRequest } from "../core/decision";
import { DomainError, refused } from "../core/errors";
import type { TDeps } from "../host/deps";
import { reviewerSentenceCode } from "../core/reviewer-sentences";
import { nativeEditTarget, nativeParametersOf } from "../host/tool-surface";
import { confineToolCwd, sessionWorkspace } from "../host/workspace";
import { approvalPolicyFor } from "../mcp/policy";
import { reviewRequestFor, reviewWithFallback } from "../reviewer";
import type { TReviewVerdict } from "../reviewer/types";
import { argumentsJsonSchema } from "../tools/arguments-json-schema";
import type { THostTool } from "../tools/types";

/** What an approver's edit turns the approval into: the new operation, re-bound (new hash). */
export type TEdit = {
  arguments: unknown;
  cwd: string | null;
  bindingHash: string;
  message: string;
  risk: "low" | "medium" | "high";
  /** The exec reviewer's verdict on the edited operation, when the agent re-reviews edits. */
  review: TReviewVerdict | null;
};

/** Cross-field rules of a decision, the same for every transport; a violation changes nothing. */
export function checkDecisionShape(input: { decision: "approve" | "deny"; arguments?: unknown; message?: string; grant?: TGrantRequest }): void {
  if (input.decision === "deny" && input.arguments !== undefined) {
    throw new DomainError("invalid_request", "arguments (an edit) can only come with decision approve.");
  }
  if (input.decision === "deny" && input.grant !== undefined) throw new DomainError("invalid_request", "grant can only come with decision approve.");
  if (input.decision === "approve" && input.message !== undefined) {
    throw new DomainError("invalid_request", 'message (a reply to the agent) can only come with decision deny: {"decision":"deny","message":"..."}.');
  }
  if (input.message !== undefined && input.message.trim() === "") throw new DomainError("invalid_request", "message must not be empty.");
}

/** The host tool behind an approval, when its arguments can be checked here (the agent's own host tools). */
/** The approval columns that say what kind of operation it is. */
type TApprovalKind = Pick<TApprovalRow, "toolName" | "action" | "external">;

/**
 * The agent's host tool an approval is a call of. An external approval is one only when its action
 * is that tool's (a coding tool or a caller's action named like a host tool is not).
 */
function editableTool(agent: TAgentConfig | undefined, approval: TApprovalKind): THostTool | null {
  const tool = agent?.tools.find((t) => t.name === approval.toolName);
  if (tool?.kind !== "host") return null;
  return !approval.external || tool.action === approval.action ? tool : null;
}

/** The policy of an external approval's action (one the caller runs itself, not a host tool), while the agent still accepts it. */
function actionOf(agent: TAgentConfig | undefined, approval: TApprovalKind): TActionPolicy | null {
  if (!agent || !approval.external || editableTool(agent, approval)) return null;
  return actionPolicyFor(agent, approval.action);
}

/**
 * An approver's edit of an action the caller runs itself: checked by the action's JSON Schema and
 * the size limit, re-bound, re-reviewed when the action is reviewed. Its risk never drops below
 * the approval's (the requester may have raised it); the requester's message stays.
 */
async function prepareActionEdit(deps: TDeps, approval: TApprovalRow, agent: TAgentConfig, policy: TActionPolicy, edited: Record<string, unknown>): Promise<TEdit | null> {
  const size = Buffer.byteLength(canonicalJson(edited));
  const problems = size > MAX_ACTION_ARGUMENTS_BYTES ? [`arguments are ${size} bytes as JSON; at most ${MAX_ACTION_ARGUMENTS_BYTES} are accepted`] : actionArgumentProblems(policy, edited);
  if (problems.length > 0) throw refused("validation_failed", { code: "editInvalid", params: { tool: approval.action, issues: problems.join("; ") } });
  if (canonicalJson(edited) === canonicalJson(approval.arguments)) return null;
  const gate = actionGate(policy, edited);
  let review: TReviewVerdict | null = null;
  if (agent.reviewEdits ?? gate.policy === "review") {
    const workspace = await sessionWorkspace(deps, approval.sessionId);
    review = await reviewWithFallback(
      deps.reviewer,
      reviewRequestFor({ cwd: null, workspace, agent: agent.name, toolName: approval.toolName, arguments: edited, action: approval.action, ...(policy.description ? { description: policy.description } : {}) }),
    );
    if (review.decision === "deny") {
      const reviewer = reviewerSentenceCode(review.rationale);
      throw refused("validation_failed", { code: "editReviewDenied", params: { risk: review.risk, rationale: review.rationale }, reviewer });
    }
  }
  const risk = gate.fixedRisk ?? review?.risk ?? policy.risk;
  return {
    arguments: edited,
    cwd: null,
    bindingHash: approvalBindingHash({ ...approval, arguments: edited, cwd: null }),
    message: approval.message,
    risk: RISK_ORDER[risk] >= RISK_ORDER[approval.risk] ? risk : approval.risk,
    review,
  };
}

const RISK_ORDER = { low: 0, medium: 1, high: 2 } as const;

/**
 * Validates an approver's edit against the tool's own argument schema, re-binds the approval to
 * the edited operation and, when the agent says so, has the exec reviewer look at it first (a
 * reviewer denial rejects the edit; nothing is approved). Returns null when nothing changed.
 */
export async function prepareEdit(deps: TDeps, approval: TApprovalRow, agentName: string, edited: Record<string, unknown>): Promise<TEdit | null> {
  const agent = deps.agents.find(agentName);
  const action = actionOf(agent, approval);
  if (agent && action) return prepareActionEdit(deps, approval, agent, action, edited);
  // A native call's tool is checked with the argument schema its plugin gave for the call (none: not editable).
  const tool = editableTool(agent, approval) ?? (agent?.nativeTools?.includes(approval.toolName) ? await nativeEditTarget(deps.db, approval) : null);
  if (!agent || !tool) {
    throw refused("validation_failed", { code: "notEditable", params: { tool: approval.toolName } });
  }
  const parsed = tool.argsSchema.safeParse(edited);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ");
    throw refused("validation_failed", { code: "editInvalid", params: { tool: tool.name, issues } });
  }
  const args = parsed.data;
  const workspace = await sessionWorkspace(deps, approval.sessionId);
  // An external approval's operation runs on the caller's machine: no server working directory is bound.
  const confined = approval.external ? { ok: true as const, cwd: null } : confineToolCwd(tool, args, workspace);
  if (!confined.ok) throw refused("validation_failed", { code: "editCwdRefused", params: { why: confined.why, cwd: confined.cwd } });
  const cwd = confined.cwd;
  if (canonicalJson(args) === canonicalJson(approval.arguments) && cwd === approval.cwd) return null;
  const reReview = agent.reviewEdits ?? approvalPolicyFor(agent, tool) === "review";
  let review: TReviewVerdict | null = null;
  if (reReview) {
    review = await reviewWithFallback(deps.reviewer, reviewRequestFor({ cwd, workspace, agent: agent.name, toolName: tool.name, arguments: args }));
    if (review.decision === "deny") {
      const reviewer = reviewerSentenceCode(review.rationale);
      throw refused("validation_failed", { code: "editReviewDenied", params: { risk: review.risk, rationale: review.rationale }, reviewer });
    }
  }
  return {
    arguments: args,
    cwd,
    bindingHash: approvalBindingHash({ ...approval, arguments: args, cwd }),
    message: tool.describe(args, cwd),
    risk: evaluatePredicates(agent, tool.name, args).risk ?? review?.risk ?? tool.risk(args),
    review,
  };
}

/** Checks a requested standing grant against the agent's settings; returns when the grant expires (null: session). */
export function grantTerms(agents: Pick<AgentRegistry, "find">, agentName: string, grant: TGrantRequest, now: Date): { scope: "session" | "days"; expiresAt: Date | null } {
  const settings = agents.find(agentName)?.grants;
  if (grant === "session") {
    if (!settings?.session) throw refused("validation_failed", { code: "grantNoSession", params: { agent: agentName } });
    return { scope: "session", expiresAt: null };
  }
  const max = settings?.maxDays ?? 0;
  if (max < 1) throw refused("validation_failed", { code: "grantNoDays", params: { agent: agentName } });
  if (grant.days > max) throw refused("validation_failed", { code: "grantMaxDays", params: { agent: agentName, max } });
  return { scope: "days", expiresAt: new Date(now.getTime() + grant.days * 86_400_000) };
}

/** What the console offers beside approve/deny for one approval (the edit form's schema, the grants the agent allows). */
export type TDecisionOptions = {
  editable: boolean;
  /** The JSON Schema of the tool's arguments when they may be edited here (the form is built from it), else null. */
  argumentsSchema: Record<string, unknown> | null;
  grantSession: boolean;
  grantMaxDays: number;
};

/** The argument schemas of the native calls among these approvals, by approval id (for {@link decisionOptionsFor}). */
export const nativeEditSchemas = (deps: Pick<TDeps, "db">, rows: Parameters<typeof nativeParametersOf>[1]) => nativeParametersOf(deps.db, rows);

/** Nothing beside approve/deny as asked (a quorum approval). */
export const NO_DECISION_OPTIONS: TDecisionOptions = { editable: false, argumentsSchema: null, grantSession: false, grantMaxDays: 0 };

/**
 * What the console offers beside approve/deny for one approval: editing, and the grants the agent
 * allows. A native call is editable when its plugin gave its argument schema (`nativeParameters`,
 * from {@link nativeEditSchemas}); an action the caller runs itself is, by its JSON Schema when it
 * has one (else as raw JSON).
 */
export function decisionOptionsFor(agents: Pick<AgentRegistry, "find">, agentName: string, approval: TApprovalKind, nativeParameters?: Record<string, unknown>): TDecisionOptions {
  const agent = agents.find(agentName);
  const tool = editableTool(agent, approval);
  const action = actionOf(agent, approval);
  const native = !tool && nativeParameters && agent?.nativeTools?.includes(approval.toolName) ? nativeParameters : null;
  return {
    editable: tool !== null || native !== null || action !== null,
    argumentsSchema: tool ? argumentsJsonSchema(tool.argsSchema) : (native ?? action?.schema ?? null),
    grantSession: Boolean(agent?.grants?.session),
    grantMaxDays: agent?.grants?.maxDays ?? 0,
  };
}
