import { z } from "zod";
import { MAX_TTL_MS } from "../core/ttl";
import { approvalById, type TApprovalRow } from "../../db/repositories/approvals";
import { approvalByIdempotencyKey, consumeApprovedExternal, insertExternalApproval, insertExternalResponse, sessionForRequest } from "../../db/repositories/external-approvals";
import { claimGrant } from "../../db/repositories/grants";
import { approvalAction, envelopeOf, finishResponse } from "../../db/repositories/responses";
import { type TActor, canRead } from "../core/actor";
import { bindingHash, canonicalJson } from "../core/binding";
import { operationHash } from "../core/decision";
import { DomainError, notFound, refused } from "../core/errors";
import { newId } from "../core/ids";
import type { TNewEvent } from "../core/frames";
import { requiredApprovalsFor } from "../core/separation-of-duties";
import { RISKS, type TAutoOutcome, type TRisk } from "../core/vocabulary";
import { ACTION_NAME, ACTION_NAME_RULE, codingAction, MAX_ACTION_ARGUMENTS_BYTES } from "../core/actions";
import { agentPolicyOf, type TApprovalPolicy, type TApprovers } from "../core/agent-policy";
import type { TQuorum } from "../core/separation-of-duties";
import { actionArgumentProblems, actionGate, actionPolicyFor } from "../agents/actions";
import { hostToolFor, shadowAgentOf, shadowEvent } from "../agents/request-gate";
import type { TAgentConfig } from "../agents/types";
import type { TRunDeps } from "../host/deps";
import { expirePending } from "../host/pending/kinds";
import { transact } from "../host/transact";
import { framesTopic, waitFor } from "../host/wait-for";
import { gateFor, grantScopesOf } from "../mcp/policy";
import { reviewRequestFor, reviewWithFallback } from "../reviewer";
import type { TReviewVerdict } from "../reviewer/types";
import { createSession } from "./invoke-response";

/**
 * External approvals: an agent that runs elsewhere asks before it runs an operation itself
 * (`POST /v1/approvals`). The approval is an ordinary approval row on a response record of its
 * own (status `requires_action` while it waits), so the inbox, notifications, the decide service
 * on every transport, expiry and cancellation treat it exactly as a hosted run's. The agent's
 * policy, the exec reviewer, standing grants and quorum apply as in `runHostTool`/`awaitApproval`.
 * Nothing runs on the server: the caller consumes the approval once, with the binding hash of the
 * arguments it is about to run, and runs the operation itself.
 */

/** The longest an external approval may wait (as a gateway question). */
const MAX_EXPIRES_IN_MS = MAX_TTL_MS;

export const ZExternalApprovalBody = z.strictObject({
  action: z
    .string()
    .regex(ACTION_NAME, `action must be ${ACTION_NAME_RULE}`)
    .describe("What the caller will run: any action name (`send_email`, `payments.refund`, `deploy:prod`), or a host tool of the agent by name or action (e.g. `exec`)"),
  arguments: z.record(z.string(), z.unknown()).describe("The operation's arguments, checked by the action's JSON Schema or the host tool's argument schema"),
  sessionId: z.string().min(1).optional().describe("One of the caller's sessions (session-scoped grants match it); a new session otherwise"),
  agent: z.string().min(1).max(64).optional().describe("The agent whose policy applies (default: the installation's default agent)"),
  message: z.string().trim().min(1).max(2000).optional().describe("What the approver reads (default: the action's description, or the tool's own)"),
  risk: z.enum(RISKS).optional().describe("Raises the risk (never lowers it below the policy's own assessment)"),
  expiresInMs: z.number().int().min(1000, "expiresInMs must be at least 1000").max(MAX_EXPIRES_IN_MS).optional(),
  idempotencyKey: z.string().min(1).max(200).optional().describe("The same key (per caller) returns the same approval"),
});
export type TExternalApprovalBody = z.infer<typeof ZExternalApprovalBody>;

export const EXTERNAL_STATUSES = ["pending", "approved", "denied", "expired", "cancelled"] as const;

export const ZExternalApprovalCreated = z.object({
  id: z.string(),
  status: z.enum(EXTERNAL_STATUSES),
  bindingHash: z.string().describe("SHA-256 of the bound operation; pass it to consume"),
  expiresAtMs: z.number().int(),
});

export const ZExternalApproval = ZExternalApprovalCreated.extend({
  action: z.string(),
  arguments: z.unknown().describe("The arguments to run: the approver's edit when there was one"),
  edited: z.boolean().describe("An approver changed the arguments (then `originalArguments` holds the requested ones and `bindingHash` is the edited operation's)"),
  originalArguments: z.unknown().optional(),
  message: z.string().optional().describe("The approver's reply (a denial with a message), or the exec reviewer's rationale of a denial"),
  risk: z.enum(RISKS),
  sessionId: z.string(),
  responseId: z.string(),
  consumed: z.boolean(),
  decidedBy: z.string().nullable(),
  decidedVia: z.string().nullable(),
});
export type TExternalApproval = z.infer<typeof ZExternalApproval>;

const RISK_ORDER: Record<TRisk, number> = { low: 0, medium: 1, high: 2 };
const higher = (a: TRisk, b: TRisk | undefined): TRisk => (b !== undefined && RISK_ORDER[b] > RISK_ORDER[a] ? b : a);

/**
 * What one external request asks about, whichever it names: a host tool of the agent (its argument
 * schema, policy, predicates and risk) or an action the caller runs itself (its entry in the
 * agent's `actions`, `*`, or the default). Checks the arguments (422 naming the field).
 */
type TSubject = {
  /** A host tool of the agent (the others are actions the caller runs itself). */
  hostTool: boolean;
  toolName: string;
  action: string;
  args: Record<string, unknown>;
  policy: TApprovalPolicy;
  fixedRisk?: TRisk;
  ownRisk: TRisk;
  description: string;
  /** The action's own approvers and quorum, kept with the approval's record (the decide service reads them there). */
  approvers?: TApprovers;
  quorum?: TQuorum;
  reviewDescription?: string;
};

function subjectOf(agent: TAgentConfig, body: TExternalApprovalBody, toolName: string | undefined): TSubject {
  const tool = toolName === undefined ? hostToolFor(agent, body.action) : null;
  if (tool) {
    const parsed = tool.argsSchema.safeParse(body.arguments);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ");
      throw new DomainError("validation_failed", `Invalid arguments for ${body.action}: ${issues}.`);
    }
    const args = parsed.data as Record<string, unknown>;
    const { policy, fixedRisk } = gateFor(agent, tool, args);
    return { hostTool: true, toolName: tool.name, action: tool.action, args, policy, ...(fixedRisk ? { fixedRisk } : {}), ownRisk: tool.risk(args), description: tool.describe(args, null) };
  }
  const declared = actionPolicyFor(agent, body.action);
  if (!declared) {
    throw new DomainError("validation_failed", `Unknown action ${body.action}: the agent ${agent.name} accepts declared actions only (externalActions "declared"), and ${body.action} is not one of them.`);
  }
  const problems = actionArgumentProblems(declared, body.arguments);
  if (problems.length > 0) throw new DomainError("validation_failed", `Invalid arguments for ${body.action}: ${problems.join("; ")}.`);
  const { policy, fixedRisk } = actionGate(declared, body.arguments);
  return {
    hostTool: false,
    toolName: toolName ?? body.action,
    action: body.action,
    args: body.arguments,
    policy,
    ...(fixedRisk ? { fixedRisk } : {}),
    ownRisk: declared.risk,
    description: declared.description ?? `Run ${body.action} (an operation the caller runs itself) with the arguments shown.`,
    ...(declared.approvers ? { approvers: declared.approvers } : {}),
    ...(declared.quorum ? { quorum: declared.quorum } : {}),
    ...(declared.description ? { reviewDescription: declared.description } : {}),
  };
}

/** What the agent's shadow policy would decide for this request where it differs from the live `policy` (null: no shadow, the same, or it refuses the action). */
function shadowOfExternal(agent: TAgentConfig, body: TExternalApprovalBody, toolName: string | undefined, policy: TApprovalPolicy): TApprovalPolicy | null {
  const shadowAgent = shadowAgentOf(agent);
  if (!shadowAgent) return null;
  let shadow: TApprovalPolicy;
  try {
    shadow = subjectOf(shadowAgent, body, toolName).policy;
  } catch {
    return null;
  }
  return shadow !== policy ? shadow : null;
}

const createdOf = (a: TApprovalRow) => ({ id: a.id, status: a.status, bindingHash: a.bindingHash, expiresAtMs: a.expiresAt.getTime() });

/** Thrown inside the create transaction when the idempotency key is taken: the insert is rolled back. */
class KeyTaken extends Error {}

/**
 * `POST /v1/approvals`: creates an approval of an operation the caller runs itself. Answers its
 * status at once: `approved` by a standing grant or a `never` policy, `denied` by the reviewer,
 * `pending` otherwise. `replayed` is true when the idempotency key returned an existing one.
 */
export async function requestExternalApproval(
  deps: TRunDeps,
  actor: TActor,
  body: TExternalApprovalBody,
  /** A coding tool's own name (`Bash` for the action `coding:Bash`); the action is then never a host tool. */
  options: { toolName?: string } = {},
): Promise<{ approval: TExternalApproval; replayed: boolean }> {
  if (actor.role === "auditor") throw refused("forbidden", { code: "auditorReadOnly", params: { act: "requestApprovals" } });
  const agentName = body.agent ?? deps.agents.defaultAgent;
  const agent = deps.agents.find(agentName);
  if (!agent) throw new DomainError("validation_failed", `agent: no agent named ${agentName} is configured.`);
  const size = Buffer.byteLength(canonicalJson(body.arguments));
  if (size > MAX_ACTION_ARGUMENTS_BYTES) throw new DomainError("payload_too_large", `arguments are ${size} bytes as JSON; at most ${MAX_ACTION_ARGUMENTS_BYTES} are accepted.`);
  if (body.idempotencyKey !== undefined) {
    const existing = await byKey(deps, actor.userId, body.idempotencyKey);
    if (existing) return { approval: replayOf(existing, body), replayed: true };
  }
  const subject = subjectOf(agent, body, options.toolName);
  const args = subject.args;
  let workspace: string | null = null;
  if (body.sessionId) {
    const session = await sessionForRequest(deps.db, body.sessionId);
    if (!session || session.userId !== actor.userId) throw notFound("session", body.sessionId);
    workspace = session.workspaceDir;
  }
  const policy = subject.policy;
  const shadow = shadowOfExternal(agent, body, options.toolName, policy);
  let verdict: TReviewVerdict | null = null;
  if (policy === "review") {
    const request = reviewRequestFor({
      cwd: null,
      workspace: workspace ?? deps.config.dataDir,
      agent: agent.name,
      toolName: subject.toolName,
      arguments: args,
      ...(subject.hostTool ? {} : { action: subject.action }),
      ...(subject.reviewDescription ? { description: subject.reviewDescription } : {}),
    });
    verdict = await reviewWithFallback(deps.reviewer, request);
  }
  // As for a hosted call: a predicate's risk wins over the reviewer's; the caller may only raise it.
  const risk = higher(subject.fixedRisk ?? verdict?.risk ?? subject.ownRisk, body.risk);
  const scopes = grantScopesOf(agent);
  const ttlMs = body.expiresInMs ?? agent.approvalTtlMs;
  try {
    const row = await transact(deps, async (tx, emit, announce) => {
      const now = deps.now();
      const sessionId = body.sessionId ?? (await createSession(tx, deps, actor.userId, agent.name));
      const responseId = newId("resp");
      const approvalId = newId("approval");
      const callId = newId("call");
      const hash = bindingHash({ userId: actor.userId, sessionId, responseId, callId, action: subject.action, arguments: args, cwd: null });
      // Settled before anyone is asked: the reviewer's denial, a `never` policy, a standing grant.
      let settled: { status: "approved" | "denied"; by: TAutoOutcome; event: TNewEvent } | null = null;
      if (verdict?.decision === "deny") {
        settled = { status: "denied", by: "reviewer", event: { type: "review.verdict", data: { callId, toolName: subject.toolName, ...verdict }, frame: true } };
      } else if (policy === "never" || verdict?.decision === "allow-once") {
        settled = { status: "approved", by: verdict ? "reviewer" : "policy", event: { type: "approval.policy", data: { callId, policy, ...(verdict ? { verdict } : {}) }, frame: false } };
      } else if (scopes.length > 0) {
        const opHash = operationHash({ userId: actor.userId, agent: agent.name, action: subject.action, arguments: args });
        const grant = await claimGrant(tx, { userId: actor.userId, agent: agent.name, operationHash: opHash, sessionId, scopes, now });
        if (grant) {
          const data = { grantId: grant.id, callId, toolName: subject.toolName, action: subject.action, scope: grant.scope, uses: grant.uses };
          settled = { status: "approved", by: "grant", event: { type: "grant.used", data, frame: false } };
        }
      }
      const response = await insertExternalResponse(tx, {
        id: responseId,
        sessionId,
        userId: actor.userId,
        agent: agent.name,
        status: "requires_action",
        input: { externalApproval: { action: subject.action, arguments: args } },
        metadata: { external: true },
        approvalTtlMs: ttlMs,
        clientToolTtlMs: agent.clientToolTtlMs,
        pendingAction: { type: "approval", id: approvalId, callId },
        // Decisions follow this policy (the action's own approvers and quorum, when it names them).
        agentPolicy: { ...agentPolicyOf(agent), ...(subject.approvers ? { approvers: subject.approvers } : {}), ...(subject.quorum ? { quorum: subject.quorum } : {}) },
      });
      if (!response) throw new Error("response insert returned nothing");
      const approval = await insertExternalApproval(tx, {
        id: approvalId,
        responseId,
        sessionId,
        userId: actor.userId,
        agent: agent.name,
        callId,
        toolName: subject.toolName,
        action: subject.action,
        arguments: args,
        cwd: null,
        bindingHash: hash,
        risk,
        requiredApprovals: requiredApprovalsFor(subject.quorum ?? agent.quorum, risk),
        message: body.message ?? subject.description,
        reviewer: verdict?.reviewer ?? null,
        reviewerRationale: verdict?.rationale ?? null,
        expiresAt: new Date(now.getTime() + ttlMs),
        external: true,
        idempotencyKey: body.idempotencyKey ?? null,
        shadow,
        ...(settled ? { status: settled.status, settledBy: settled.by, decidedAt: now, decidedVia: "system" as const } : {}),
      });
      if (!approval) throw new KeyTaken();
      const created: TNewEvent = { type: "response.created", data: { metadata: { external: true } }, frame: true, actorUserId: actor.userId, transport: "http" };
      const shadowed: TNewEvent[] = shadow ? [shadowEvent({ callId, toolName: subject.toolName, action: subject.action, live: policy, shadow })] : [];
      const action = approvalAction(approval);
      announce({ k: "inbox", change: { kind: "response", responseId } });
      if (settled) {
        const events: TNewEvent[] = [created, ...shadowed, settled.event, { type: "approval.resolved", data: { approvalId, decision: settled.status === "approved" ? "approve" : "deny" }, frame: true, transport: "system" }];
        const { envelope, stored } = finishResponse(tx, response, settled.status === "approved" ? "completed" : "denied");
        await stored;
        await emit(responseId, [...events, { type: "response.completed", data: { ...envelope, responseId }, frame: true }]);
        return approval;
      }
      const envelope = envelopeOf(response, "requires_action", action);
      await emit(responseId, [
        created,
        ...shadowed,
        ...(verdict ? [{ type: "review.verdict", data: { callId, toolName: subject.toolName, ...verdict }, frame: true }] : []),
        { type: "approval.requested", data: { approval: action }, frame: true },
        { type: "response.completed", data: { ...envelope, responseId }, frame: true },
      ]);
      announce({ k: "inbox", change: { kind: "approval", responseId, id: approvalId } });
      return approval;
    });
    return { approval: externalView(row), replayed: false };
  } catch (error) {
    if (!(error instanceof KeyTaken) || body.idempotencyKey === undefined) throw error;
    const existing = await byKey(deps, actor.userId, body.idempotencyKey);
    if (!existing) throw error;
    return { approval: replayOf(existing, body), replayed: true };
  }
}

async function byKey(deps: TRunDeps, userId: string, key: string): Promise<TApprovalRow | null> {
  return approvalByIdempotencyKey(deps.db, userId, key);
}

/**
 * The approval an idempotency key already names, as `GET` shows it now: after an approver's edit,
 * the edited arguments and their binding hash (a retry must never run the original ones). A
 * different operation under the same key is refused.
 */
function replayOf(existing: TApprovalRow, body: TExternalApprovalBody): TExternalApproval {
  const requested = existing.originalArguments ?? existing.arguments;
  const sameAction = existing.action === body.action || existing.toolName === body.action;
  if (!sameAction || canonicalJson(requested) !== canonicalJson(body.arguments)) {
    throw new DomainError("conflict", `The idempotency key ${body.idempotencyKey} was already used for a different operation; use a new key.`);
  }
  return externalView(existing);
}

/** One external approval the caller may read (404 otherwise, as for an unknown id). */
async function readable(deps: TRunDeps, actor: TActor, id: string): Promise<TApprovalRow> {
  const row = await approvalById(deps.db, id);
  if (!row || !canRead(actor, row.userId)) throw notFound("approval", id);
  return row;
}

function externalView(a: TApprovalRow): TExternalApproval {
  const message = a.replyMessage ?? (a.status === "denied" && a.reviewerRationale ? a.reviewerRationale : null);
  return {
    ...createdOf(a),
    action: a.action,
    arguments: a.arguments,
    edited: a.originalArguments !== null && a.originalArguments !== undefined,
    ...(a.originalArguments !== null && a.originalArguments !== undefined ? { originalArguments: a.originalArguments } : {}),
    ...(message ? { message } : {}),
    risk: a.risk,
    sessionId: a.sessionId,
    responseId: a.responseId,
    consumed: a.consumedAt !== null,
    decidedBy: a.decidedBy,
    decidedVia: a.decidedVia,
  };
}

/**
 * `GET /v1/approvals/{id}?wait=MS`: the approval's status, waiting up to `waitMs` (bounded by the
 * server's boundary timeout) while it is pending. A wait that runs out answers the current status.
 */
export async function getExternalApproval(deps: TRunDeps, actor: TActor, id: string, waitMs: number): Promise<TExternalApproval> {
  const first = await readable(deps, actor, id);
  const deadline = Date.now() + Math.min(Math.max(0, waitMs), deps.config.boundaryTimeoutMs);
  const check = async (): Promise<TApprovalRow | null> => {
    const row = await approvalById(deps.db, id);
    if (!row) return first;
    if (row.status !== "pending") return row;
    // A due one is expired when read (the sweep would a moment later).
    if (row.expiresAt.getTime() <= deps.now().getTime()) {
      await expirePending(deps, deps.host, { type: "approval", id });
      const after = await approvalById(deps.db, id);
      return after?.status === "pending" ? null : after;
    }
    return null;
  };
  const settled = first.status !== "pending" ? first : await waitFor(framesTopic(deps.bus, first.responseId, () => true), check, { deadline, pollMs: 1000 });
  if (settled) return externalView(settled);
  return externalView((await readable(deps, actor, id)) ?? first);
}

/**
 * `POST /v1/approvals/{id}/consume`: uses an approved external approval exactly once, for the
 * operation with this binding hash. One conditional UPDATE decides; every refusal is 409 with
 * its reason code and changes nothing.
 */
export async function consumeExternalApproval(deps: TRunDeps, actor: TActor, id: string, hash: string): Promise<TExternalApproval> {
  const row = await readable(deps, actor, id);
  if (row.userId !== actor.userId) throw new DomainError("forbidden", "Only the requester of an approval consumes it (it runs the operation).");
  if (!row.external) throw new DomainError("conflict", "This approval belongs to a hosted run; the server runs its operation, so it cannot be consumed.");
  const used = await consumeApprovedExternal(deps.db, { id, userId: actor.userId, bindingHash: hash, at: deps.now() });
  if (used) return externalView(used);
  const current = (await approvalById(deps.db, id)) ?? row;
  if (current.status === "approved" && current.consumedAt !== null) throw new DomainError("already_consumed", "This approval was already consumed; an approval runs its operation once.");
  if (current.status === "expired") throw new DomainError("expired", "This approval expired before anyone decided it; the operation must not run.");
  if (current.status === "pending") throw new DomainError("not_approved", "This approval is still pending; wait for the decision before running the operation.");
  if (current.status !== "approved") throw new DomainError("not_approved", `This approval was ${current.status}; the operation must not run.`);
  throw new DomainError("binding_changed", "The binding hash does not match the approved operation (the arguments differ, or an approver edited them: read the approval again).");
}

/**
 * Requests an external approval and waits for its decision (the MCP face's `request_approval`
 * and `approval_prompt`): an approved one is consumed at once, since the tool's answer is its one use.
 */
export async function requestAndAwait(deps: TRunDeps, actor: TActor, body: TExternalApprovalBody, timeoutMs: number, options: { toolName?: string } = {}): Promise<TExternalApproval> {
  const { approval } = await requestExternalApproval(deps, actor, body, options);
  const deadline = Date.now() + timeoutMs;
  let view = approval;
  while (view.status === "pending" && Date.now() < deadline) view = await getExternalApproval(deps, actor, approval.id, deadline - Date.now());
  if (view.status !== "approved") return view;
  return view.consumed ? view : consumeExternalApproval(deps, actor, view.id, view.bindingHash);
}

export type TPermissionAnswer = { behavior: "allow"; updatedInput: Record<string, unknown> } | { behavior: "deny"; message: string };

/**
 * A coding agent's permission prompt (`{tool_name, input}`): the tool is the action
 * `coding:<tool_name>` of the agent (`coding:Bash`, `coding:Write`, `coding:mcp__github__create_issue`),
 * configurable like any action (its entry, a pattern such as `coding:*`, `*`, or the default: a
 * person). The approval binds the complete input, and the approver sees all of it. Allowed: the
 * input exactly as approved (the approver's edit when there was one), never a field nobody saw.
 * A name that is not a coding tool's shape, an unknown agent or an input over the size limit is
 * an error (nothing is created); a refusal by policy is a denial saying why.
 */
export async function permissionPrompt(deps: TRunDeps, actor: TActor, prompt: { tool_name: string; input: Record<string, unknown> }, options: { agent?: string; timeoutMs: number }): Promise<TPermissionAnswer> {
  const coding = codingAction(prompt.tool_name);
  if (!coding.ok) throw new DomainError("invalid_request", coding.why);
  const agentName = options.agent ?? deps.agents.defaultAgent;
  if (!deps.agents.find(agentName)) throw new DomainError("invalid_request", `agent: no agent named ${agentName} is configured.`);
  const body: TExternalApprovalBody = { action: coding.action, arguments: prompt.input, ...(options.agent ? { agent: options.agent } : {}) };
  let view: TExternalApproval;
  try {
    view = await requestAndAwait(deps, actor, body, options.timeoutMs, { toolName: prompt.tool_name });
  } catch (error) {
    // The agent's policy refuses the action or its input: the tool is not allowed, and the agent reads why.
    if (error instanceof DomainError && error.code === "validation_failed") {
      return { behavior: "deny", message: `${error.message} The tool was not allowed.` };
    }
    throw error;
  }
  if (view.status === "approved") return { behavior: "allow", updatedInput: view.arguments as Record<string, unknown> };
  const why = view.status === "pending" ? "Nobody decided in time" : view.status === "expired" ? "The approval expired" : "Denied in Countersign";
  return { behavior: "deny", message: view.message ?? `${why}; the tool was not allowed.` };
}
