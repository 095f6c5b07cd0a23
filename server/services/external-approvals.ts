import { and, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import { MAX_TTL_MS } from "../core/ttl";
import { approvalAction, envelopeOf, finishResponse } from "../../db/repositories/responses";
import { agentSessions, approvals, responses } from "../../db/schema";
import { type TActor, canRead } from "../core/actor";
import { bindingHash, canonicalJson } from "../core/binding";
import { operationHash } from "../core/decision";
import { DomainError, notFound, refused } from "../core/errors";
import { newId } from "../core/ids";
import type { TNewEvent } from "../core/frames";
import { requiredApprovalsFor } from "../core/separation-of-duties";
import { RISKS, type TRisk } from "../core/vocabulary";
import { claimGrant } from "../host/approval-outcome";
import type { TRunDeps } from "../host/deps";
import { expirePending } from "../host/pending/kinds";
import { transact } from "../host/transact";
import { framesTopic, waitFor } from "../host/wait-for";
import { gateFor, grantScopesOf } from "../mcp/policy";
import { reviewRequestFor, reviewWithFallback } from "../reviewer";
import type { TReviewVerdict } from "../reviewer/types";
import type { THostTool } from "../tools/types";
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

/** Arguments larger than this (canonical JSON) are refused: approvers read them in the console, Slack and mail. */
export const MAX_EXTERNAL_ARGUMENTS_BYTES = 64 * 1024;
/** The longest an external approval may wait (as a gateway question). */
const MAX_EXPIRES_IN_MS = MAX_TTL_MS;

export const ZExternalApprovalBody = z.strictObject({
  action: z.string().min(1).max(200).describe("A host tool of the agent, by name or action (e.g. `exec`); its policy, reviewer and risk apply"),
  arguments: z.record(z.string(), z.unknown()).describe("The operation's arguments, checked by the tool's argument schema"),
  sessionId: z.string().min(1).optional().describe("One of the caller's sessions (session-scoped grants match it); a new session otherwise"),
  agent: z.string().min(1).max(64).optional().describe("The agent whose policy applies (default: the installation's default agent)"),
  message: z.string().trim().min(1).max(2000).optional().describe("What the approver reads (default: the tool's own description)"),
  risk: z.enum(RISKS).optional().describe("Raises the risk (never lowers it below the tool's own assessment)"),
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

type TApprovalRow = typeof approvals.$inferSelect;

const RISK_ORDER: Record<TRisk, number> = { low: 0, medium: 1, high: 2 };
const higher = (a: TRisk, b: TRisk | undefined): TRisk => (b !== undefined && RISK_ORDER[b] > RISK_ORDER[a] ? b : a);

/** The host tool the action names (by tool name or action); 422 naming it otherwise. */
function toolFor(deps: TRunDeps, agentName: string, action: string): THostTool {
  const agent = deps.agents.find(agentName);
  const tool = agent?.tools.find((t) => t.kind === "host" && (t.name === action || t.action === action));
  if (tool?.kind !== "host") {
    throw new DomainError("validation_failed", `Unknown action ${action}: the agent ${agentName} has no tool of that name or action, so no policy applies to it.`);
  }
  return tool;
}

const createdOf = (a: TApprovalRow) => ({ id: a.id, status: a.status, bindingHash: a.bindingHash, expiresAtMs: a.expiresAt.getTime() });

/** Thrown inside the create transaction when the idempotency key is taken: the insert is rolled back. */
class KeyTaken extends Error {}

/**
 * `POST /v1/approvals`: creates an approval of an operation the caller runs itself. Answers its
 * status at once: `approved` by a standing grant or a `never` policy, `denied` by the reviewer,
 * `pending` otherwise. `replayed` is true when the idempotency key returned an existing one.
 */
export async function requestExternalApproval(deps: TRunDeps, actor: TActor, body: TExternalApprovalBody): Promise<{ approval: TExternalApproval; replayed: boolean }> {
  if (actor.role === "auditor") throw refused("forbidden", { code: "auditorReadOnly", params: { act: "requestApprovals" } });
  const agentName = body.agent ?? deps.agents.defaultAgent;
  const agent = deps.agents.find(agentName);
  if (!agent) throw new DomainError("validation_failed", `agent: no agent named ${agentName} is configured.`);
  const size = Buffer.byteLength(canonicalJson(body.arguments));
  if (size > MAX_EXTERNAL_ARGUMENTS_BYTES) throw new DomainError("payload_too_large", `arguments are ${size} bytes as JSON; at most ${MAX_EXTERNAL_ARGUMENTS_BYTES} are accepted.`);
  if (body.idempotencyKey !== undefined) {
    const existing = await byKey(deps, actor.userId, body.idempotencyKey);
    if (existing) return { approval: replayOf(existing, body), replayed: true };
  }
  const tool = toolFor(deps, agentName, body.action);
  const parsed = tool.argsSchema.safeParse(body.arguments);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ");
    throw new DomainError("validation_failed", `Invalid arguments for ${body.action}: ${issues}.`);
  }
  const args = parsed.data;
  let workspace: string | null = null;
  if (body.sessionId) {
    const [session] = await deps.db.select().from(agentSessions).where(eq(agentSessions.id, body.sessionId));
    if (!session || session.userId !== actor.userId) throw notFound("session", body.sessionId);
    workspace = session.workspaceDir;
  }
  const { policy, fixedRisk } = gateFor(agent, tool, args);
  let verdict: TReviewVerdict | null = null;
  if (policy === "review") {
    const request = reviewRequestFor({ cwd: null, workspace: workspace ?? deps.config.dataDir, agent: agent.name, toolName: tool.name, arguments: args });
    verdict = await reviewWithFallback(deps.reviewer, request);
  }
  // As for a hosted call: a predicate's risk wins over the reviewer's; the caller may only raise it.
  const risk = higher(fixedRisk ?? verdict?.risk ?? tool.risk(args), body.risk);
  const scopes = grantScopesOf(agent);
  const ttlMs = body.expiresInMs ?? agent.approvalTtlMs;
  try {
    const row = await transact(deps, async (tx, emit, announce) => {
      const now = deps.now();
      const sessionId = body.sessionId ?? (await createSession(tx, deps, actor.userId, agent.name));
      const responseId = newId("resp");
      const approvalId = newId("approval");
      const callId = newId("call");
      const hash = bindingHash({ userId: actor.userId, sessionId, responseId, callId, action: tool.action, arguments: args, cwd: null });
      // Settled before anyone is asked: the reviewer's denial, a `never` policy, a standing grant.
      let settled: { status: "approved" | "denied"; event: TNewEvent } | null = null;
      if (verdict?.decision === "deny") {
        settled = { status: "denied", event: { type: "review.verdict", data: { callId, toolName: tool.name, ...verdict }, frame: true } };
      } else if (policy === "never" || verdict?.decision === "allow-once") {
        settled = { status: "approved", event: { type: "approval.policy", data: { callId, policy, ...(verdict ? { verdict } : {}) }, frame: false } };
      } else if (scopes.length > 0) {
        const opHash = operationHash({ userId: actor.userId, agent: agent.name, action: tool.action, arguments: args });
        const grant = await claimGrant(tx, { userId: actor.userId, agent: agent.name, operationHash: opHash, sessionId, scopes, now });
        if (grant) {
          const data = { grantId: grant.id, callId, toolName: tool.name, action: tool.action, scope: grant.scope, uses: grant.uses };
          settled = { status: "approved", event: { type: "grant.used", data, frame: false } };
        }
      }
      const [response] = await tx
        .insert(responses)
        .values({
          id: responseId,
          sessionId,
          userId: actor.userId,
          agent: agent.name,
          status: "requires_action",
          input: { externalApproval: { action: tool.action, arguments: args } },
          metadata: { external: true },
          approvalTtlMs: ttlMs,
          clientToolTtlMs: agent.clientToolTtlMs,
          pendingAction: { type: "approval", id: approvalId, callId },
        })
        .returning();
      if (!response) throw new Error("response insert returned nothing");
      const [approval] = await tx
        .insert(approvals)
        .values({
          id: approvalId,
          responseId,
          sessionId,
          userId: actor.userId,
          callId,
          toolName: tool.name,
          action: tool.action,
          arguments: args,
          cwd: null,
          bindingHash: hash,
          risk,
          requiredApprovals: requiredApprovalsFor(agent.quorum, risk),
          message: body.message ?? tool.describe(args, null),
          reviewer: verdict?.reviewer ?? null,
          reviewerRationale: verdict?.rationale ?? null,
          expiresAt: new Date(now.getTime() + ttlMs),
          external: true,
          idempotencyKey: body.idempotencyKey ?? null,
          ...(settled ? { status: settled.status, decidedAt: now, decidedVia: "system" as const } : {}),
        })
        .onConflictDoNothing({ target: [approvals.userId, approvals.idempotencyKey] })
        .returning();
      if (!approval) throw new KeyTaken();
      const created: TNewEvent = { type: "response.created", data: { metadata: { external: true } }, frame: true, actorUserId: actor.userId, transport: "http" };
      const action = approvalAction(approval);
      announce({ k: "inbox", change: { kind: "response", responseId } });
      if (settled) {
        const events: TNewEvent[] = [created, settled.event, { type: "approval.resolved", data: { approvalId, decision: settled.status === "approved" ? "approve" : "deny" }, frame: true, transport: "system" }];
        const { envelope, stored } = finishResponse(tx, response, settled.status === "approved" ? "completed" : "denied");
        await stored;
        await emit(responseId, [...events, { type: "response.completed", data: { ...envelope, responseId }, frame: true }]);
        return approval;
      }
      const envelope = envelopeOf(response, "requires_action", action);
      await emit(responseId, [
        created,
        ...(verdict ? [{ type: "review.verdict", data: { callId, toolName: tool.name, ...verdict }, frame: true }] : []),
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
  const [row] = await deps.db
    .select()
    .from(approvals)
    .where(and(eq(approvals.userId, userId), eq(approvals.idempotencyKey, key)));
  return row ?? null;
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
  const [row] = await deps.db.select().from(approvals).where(eq(approvals.id, id));
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
    const [row] = await deps.db.select().from(approvals).where(eq(approvals.id, id));
    if (!row) return first;
    if (row.status !== "pending") return row;
    // A due one is expired when read (the sweep would a moment later).
    if (row.expiresAt.getTime() <= deps.now().getTime()) {
      await expirePending(deps, deps.host, { type: "approval", id });
      const [after] = await deps.db.select().from(approvals).where(eq(approvals.id, id));
      return after?.status === "pending" ? null : (after ?? null);
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
  const [used] = await deps.db
    .update(approvals)
    .set({ consumedAt: deps.now() })
    .where(and(eq(approvals.id, id), eq(approvals.userId, actor.userId), eq(approvals.external, true), eq(approvals.status, "approved"), eq(approvals.bindingHash, hash), isNull(approvals.consumedAt)))
    .returning();
  if (used) return externalView(used);
  const [now] = await deps.db.select().from(approvals).where(eq(approvals.id, id));
  const current = now ?? row;
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
export async function requestAndAwait(deps: TRunDeps, actor: TActor, body: TExternalApprovalBody, timeoutMs: number): Promise<TExternalApproval> {
  const { approval } = await requestExternalApproval(deps, actor, body);
  const deadline = Date.now() + timeoutMs;
  let view = approval;
  while (view.status === "pending" && Date.now() < deadline) view = await getExternalApproval(deps, actor, approval.id, deadline - Date.now());
  if (view.status !== "approved") return view;
  return view.consumed ? view : consumeExternalApproval(deps, actor, view.id, view.bindingHash);
}

export type TPermissionAnswer = { behavior: "allow"; updatedInput: Record<string, unknown> } | { behavior: "deny"; message: string };

/**
 * A coding agent's permission prompt (`{tool_name, input}`): its tool is mapped to a host tool of
 * the agent (`Bash` → `exec` with its command; otherwise a tool of the same name), asked for as an
 * external approval, and answered allow (with the approver's edit) or deny (with the reply).
 * A tool Countersign has no policy for is denied, saying so.
 */
export async function permissionPrompt(deps: TRunDeps, actor: TActor, prompt: { tool_name: string; input: Record<string, unknown> }, options: { agent?: string; timeoutMs: number }): Promise<TPermissionAnswer> {
  const isBash = prompt.tool_name === "Bash";
  const body: TExternalApprovalBody = isBash
    ? { action: "exec", arguments: { command: String(prompt.input.command ?? "") }, ...(options.agent ? { agent: options.agent } : {}) }
    : { action: prompt.tool_name, arguments: prompt.input, ...(options.agent ? { agent: options.agent } : {}) };
  let view: TExternalApproval;
  try {
    view = await requestAndAwait(deps, actor, body, options.timeoutMs);
  } catch (error) {
    if (error instanceof DomainError && (error.code === "validation_failed" || error.code === "payload_too_large")) return { behavior: "deny", message: `${error.message} The tool was not allowed.` };
    throw error;
  }
  if (view.status === "approved") {
    const args = view.arguments as Record<string, unknown>;
    return { behavior: "allow", updatedInput: isBash ? { ...prompt.input, command: args.command } : args };
  }
  const why = view.status === "pending" ? "Nobody decided in time" : view.status === "expired" ? "The approval expired" : "Denied in Countersign";
  return { behavior: "deny", message: view.message ?? `${why}; the tool was not allowed.` };
}
