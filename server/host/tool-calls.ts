import { openClientToolRequest } from "../../db/repositories/client-tools";
import { insertQuestion, toRecords } from "../../db/repositories/question-records";
import { approvalAction, clientToolAction } from "../../db/repositories/responses";
import { openApproval, pendingQuestionOfSession } from "../../db/repositories/tool-calls";
import type { TApprovalPolicy } from "../core/agent-policy";
import { bindingHash } from "../core/binding";
import type { TAutoOutcome, TRisk } from "../core/vocabulary";
import { operationHash } from "../core/decision";
import type { TRequiredAction } from "../core/envelope";
import { newId } from "../core/ids";
import { deriveQuestionId } from "../core/questions/schema";
import { requiredApprovalsFor } from "../core/separation-of-duties";
import type { TNodeInvokeArgs } from "../devices/node-invoke-tool";
import { runDeviceTool, type TDeviceToolHost } from "../devices/run-device-tool";
import { shadowEvent, shadowOfCall } from "../agents/request-gate";
import { gateFor, grantScopesOf } from "../mcp/policy";
import { findMcpTool } from "./mcp-tools";
import type { TReviewVerdict } from "../reviewer";
import { recordedReview } from "./review-step";
import type { TClientTool, THostTool, TQuestionTool } from "../tools/types";
import { approvedOutcome, claimGrant, RepliedInstead, replyResult, type TApprovalOutcome, type TApprovedEdit, withEditNotice } from "./approval-outcome";
import { type Attempt, AttemptSuspended, HOST_RUNTIME_ID, type TToolCall } from "./attempt";
import type { TRunClaim } from "./pending/contract";
import { confineCwd, confineToolCwd } from "./workspace";

/** `fixedRisk`: set by an agent's argument predicate; it wins over the tool's and the reviewer's estimate. */
type TApprovalTarget = {
  name: string;
  action: string;
  describe: (a: unknown, c: string | null) => string;
  risk: (a: unknown) => TRisk;
  fixedRisk?: TRisk;
  /** The live policy that asked, and what the agent's shadow policy would have decided where it differs. */
  live?: TApprovalPolicy;
  shadow?: TApprovalPolicy | null;
};

/** A tool result that reports a failure (an error, a non-zero exit, a timeout). */
const isFailedResult = (output: unknown): boolean => {
  if (output === null || typeof output !== "object") return false;
  const o = output as Record<string, unknown>;
  return "error" in o || (typeof o.exitCode === "number" && o.exitCode !== 0) || o.exitCode === null || o.timedOut === true;
};

const CRASHED = { error: "The server stopped while this tool was running; it was not run again." };

/**
 * Runs one tool call of an attempt: asks for approval or waits on the client or a person (the
 * run suspends on a pending action), executes at most once, and records the result.
 */
export async function runToolCall(attempt: Attempt, call: TToolCall, context?: string): Promise<unknown> {
  const key = `tool:${call.id}`;
  const done = attempt.stepOf(key);
  if (done?.status === "completed") return done.result;
  // Marked running under another claim: a process died while it ran; we cannot know its effect, so never again.
  if (done?.status === "running" && (done.result as TRunClaim | null)?.claim !== attempt.claim) return recordToolResult(attempt, call, CRASHED);
  // A cancelled or timed-out attempt starts no new tool (and asks nobody for approval).
  attempt.assertNotCancelled();
  const tool = attempt.agent.tools.find((t) => t.name === call.name) ?? (await findMcpTool(attempt.deps, attempt, call));
  if (!tool) return recordToolResult(attempt, call, { error: `Unknown tool: ${call.name}.` });
  const parsed = tool.argsSchema.safeParse(call.arguments ?? {});
  if (!parsed.success) {
    return recordToolResult(attempt, call, { error: `Invalid arguments for ${call.name}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ")}` });
  }
  const args = parsed.data;
  if (tool.kind === "client") return awaitClientTool(attempt, call, args, tool);
  if (tool.kind === "question") return awaitQuestion(attempt, call, args, tool);
  if (tool.kind === "device") {
    return runDeviceTool(deviceToolHost(attempt, call), args as TNodeInvokeArgs).catch((error: unknown) => {
      if (error instanceof RepliedInstead) return recordToolResult(attempt, call, replyResult(error.reply));
      throw error;
    });
  }
  return runHostTool(attempt, call, args, tool, context);
}

async function runHostTool(attempt: Attempt, call: TToolCall, args: unknown, tool: THostTool, context?: string): Promise<unknown> {
  let runArgs = args;
  // The working directory is confined to the workspace before anyone is asked; refused otherwise.
  const requested = confineToolCwd(tool, args, attempt.workspaceDir);
  if (!requested.ok) return recordToolResult(attempt, call, { error: `${requested.message} The command was not run.` });
  let cwd = requested.cwd;
  let edit: TApprovedEdit | null = null;
  // The agent's argument predicates may force a person's approval and set the call's risk.
  const gate = await passGate(attempt, call, args, cwd, tool, context);
  // The reviewer's deny is final and goes back to the agent; it is never escalated to a person.
  if (gate.kind === "reviewer_denied") {
    return recordToolResult(attempt, call, {
      error: "The exec reviewer denied this command; it was not run.",
      decision: "deny",
      risk: gate.verdict.risk,
      rationale: gate.verdict.rationale,
      guidance: gate.verdict.guidance,
    });
  }
  if (gate.kind === "replied") return recordToolResult(attempt, call, replyResult(gate.reply));
  if (gate.edit) {
    runArgs = gate.edit.arguments;
    cwd = gate.edit.cwd;
    edit = gate.edit;
  }
  await markRunning(attempt, call, tool.pure === true);
  let failed = false;
  // Re-resolved right before the call: a directory swapped for a symlink since the approval is refused.
  const runCwd = cwd === null ? null : confineCwd(attempt.workspaceDir, cwd);
  const output =
    runCwd !== null && !runCwd.ok
      ? { error: `${runCwd.message} The command was not run.` }
      : await tool.execute(runArgs, { ...toolContext(attempt), cwd: runCwd?.absolute ?? null }).catch((error: unknown) => {
          failed = true;
          return { error: error instanceof Error ? error.message : String(error) };
        });
  const result = await applyMiddleware(attempt, call, output, failed || isFailedResult(output));
  return recordToolResult(attempt, call, edit ? withEditNotice(result, args, edit) : result);
}

/**
 * Commits the "running" marker before a tool with side effects runs, so a process that dies
 * meanwhile never runs it again; a call the settling transaction already marked for this attempt,
 * and a pure tool, need no commit of their own.
 */
async function markRunning(attempt: Attempt, call: TToolCall, pure: boolean): Promise<void> {
  const key = `tool:${call.id}`;
  if (pure || attempt.stepOf(key)?.status === "running") return;
  attempt.buffer(key, "running", { claim: attempt.claim } satisfies TRunClaim);
  await attempt.commit();
}

/** What a host tool may use while it runs: the run's identity, its workspace and the sandbox with the agent's allowances. */
function toolContext(attempt: Attempt) {
  const r = attempt.response;
  const exec = { sandbox: attempt.deps.sandbox, network: attempt.agent.exec?.network ?? false, env: attempt.agent.exec?.env ?? [], processes: attempt.deps.processes, environment: attempt.deps.config.environment };
  return { workspaceDir: attempt.workspaceDir, signal: attempt.signal, userId: r.userId, sessionId: r.sessionId, responseId: r.id, exec };
}

/**
 * Runs the tool-result middleware registered for this runtime before the model sees the
 * result; a rewritten result keeps the original execution failure visible.
 */
async function applyMiddleware(attempt: Attempt, call: TToolCall, output: unknown, isError: boolean): Promise<unknown> {
  const applied = await attempt.runtime.middleware.apply(HOST_RUNTIME_ID, { toolName: call.name, callId: call.id, result: output, isError });
  if (applied.appliedBy.length === 0 && applied.skipped.length === 0) return output;
  attempt.capabilities.trajectory.recordEvent("tool_result.middleware", { callId: call.id, appliedBy: applied.appliedBy, skipped: applied.skipped.length });
  // Only skipped (failing) middleware: the result goes on exactly as the tool returned it.
  if (applied.appliedBy.length === 0) return output;
  if (!applied.isError) return applied.result;
  const base = applied.result !== null && typeof applied.result === "object" && !Array.isArray(applied.result) ? applied.result : { result: applied.result };
  return { ...base, isError: true, ...(applied.originalError !== undefined ? { originalError: applied.originalError } : {}) };
}

/**
 * The tool-result middleware on a result whose failure is read from the result itself (a device
 * tool's, a native tool's as its harness reports it): the same runner and rules as a host tool's.
 */
export const rewriteToolResult = (attempt: Attempt, call: TToolCall, output: unknown): Promise<unknown> => applyMiddleware(attempt, call, output, isFailedResult(output));

/** Records the tool result the agent sees (buffered: it commits with the next commit of the attempt). */
export async function recordToolResult(
  attempt: Attempt,
  call: TToolCall,
  output: unknown,
  events: ReadonlyArray<{ type: string; data: Record<string, unknown> }> = [],
): Promise<unknown> {
  return attempt.step(`tool:${call.id}`, async (record) => {
    for (const e of events) record.event(e.type, e.data);
    record.item({ type: "tool_result", callId: call.id, name: call.name, output });
    record.frame("response.tool_result", { callId: call.id, name: call.name, output });
    return output;
  });
}

/** What a device tool call (server/devices/run-device-tool.ts) may use of this attempt. */
function deviceToolHost(attempt: Attempt, call: TToolCall): TDeviceToolHost {
  return {
    deps: attempt.deps,
    response: attempt.response,
    callId: call.id,
    signal: attempt.signal,
    requiredNodeCommands: attempt.requiredNodeCommands,
    awaitApproval: async (args, target) => {
      const outcome = await awaitApproval(attempt, call, args, null, target, null);
      if ("reply" in outcome) throw new RepliedInstead(outcome.reply);
    },
    markRunning: () => markRunning(attempt, call, false),
    finish: async (output, event) => recordToolResult(attempt, call, await rewriteToolResult(attempt, call, output), [event]),
  };
}

/** How one call passed the gate before it runs: allowed (perhaps with an approver's edit), answered with a reply instead, or denied by the exec reviewer. */
export type TGateOutcome = { kind: "allowed"; edit: TApprovedEdit | null } | { kind: "replied"; reply: string } | { kind: "reviewer_denied"; verdict: Extract<TReviewVerdict, { decision: "deny" }> };

/**
 * The gate before a call of a host tool (or a native tool seen as one) runs: the agent's policy
 * raised by its predicates (`gateFor`); `review` asks the exec reviewer, whose `ask` goes to a
 * person; `always` goes to a person at once. A person's approval suspends the run (it throws the
 * attempt's suspension) and is read back from its settlement when the run resumes.
 */
export async function passGate(attempt: Attempt, call: TToolCall, args: unknown, cwd: string | null, tool: THostTool, context?: string): Promise<TGateOutcome> {
  const { policy, fixedRisk } = gateFor(attempt.agent, tool, args);
  // The shadow policy decides nothing; where it would differ, the request's record says so.
  const shadow = shadowOfCall(attempt.agent, tool, args, policy);
  let verdict: TReviewVerdict | null = null;
  if (policy === "review") {
    verdict = await review(attempt, call, args, cwd, tool, context);
    if (verdict.decision === "deny") {
      recordGatePass(attempt, call, { args, cwd, tool, risk: fixedRisk ?? verdict.risk, live: policy, shadow }, "reviewer", "deny");
      return { kind: "reviewer_denied", verdict };
    }
    if (verdict.decision !== "ask") {
      recordGatePass(attempt, call, { args, cwd, tool, risk: fixedRisk ?? verdict.risk, live: policy, shadow }, "reviewer", "approve");
      return { kind: "allowed", edit: null };
    }
  } else if (policy !== "always") {
    recordGatePass(attempt, call, { args, cwd, tool, risk: fixedRisk ?? tool.risk(args), live: policy, shadow }, "policy", "approve");
    return { kind: "allowed", edit: null };
  }
  const target: TApprovalTarget = { name: tool.name, action: tool.action, describe: (a, c) => tool.describe(a, c), risk: (a) => tool.risk(a), fixedRisk, live: policy, shadow };
  const outcome = await awaitApproval(attempt, call, args, cwd, target, verdict);
  return "reply" in outcome ? { kind: "replied", reply: outcome.reply } : { kind: "allowed", edit: outcome.edit };
}

/** Buffers the record of a call the gate settled without asking anyone (analytics, simulation). */
function recordGatePass(
  attempt: Attempt,
  call: TToolCall,
  request: { args: unknown; cwd: string | null; tool: { name: string; action: string }; risk: TRisk; live: TApprovalPolicy; shadow: TApprovalPolicy | null },
  settledBy: TAutoOutcome,
  decision: "approve" | "deny",
): void {
  const r = attempt.response;
  if (request.shadow) attempt.bufferEvent(shadowEvent({ callId: call.id, toolName: request.tool.name, action: request.tool.action, live: request.live, shadow: request.shadow }));
  attempt.bufferGatePass({
    id: newId("gate"),
    responseId: r.id,
    sessionId: r.sessionId,
    userId: r.userId,
    agent: attempt.agent.name,
    callId: call.id,
    toolName: request.tool.name,
    action: request.tool.action,
    arguments: request.args,
    cwd: request.cwd,
    risk: request.risk,
    settledBy,
    decision,
    shadow: request.shadow,
  });
}

/**
 * Asks the exec reviewer once per tool call (the verdict is a step, so a resumed attempt reuses
 * it); an identical later call is reviewed again. Every verdict is a trajectory frame.
 */
function review(attempt: Attempt, call: TToolCall, args: unknown, cwd: string | null, tool: { name: string }, context?: string): Promise<TReviewVerdict> {
  return recordedReview(attempt, `review:${call.id}`, call.id, { cwd, agent: attempt.agent.name, toolName: tool.name, arguments: args, context });
}

/**
 * The approval of one operation: its settlement when a decision resumed the run; otherwise a
 * standing grant for this exact operation, or a new approval the run suspends on, in one commit.
 */
async function awaitApproval(attempt: Attempt, call: TToolCall, args: unknown, cwd: string | null, tool: TApprovalTarget, verdict: TReviewVerdict | null): Promise<TApprovalOutcome> {
  const r = attempt.response;
  const hash = bindingHash({ userId: r.userId, sessionId: r.sessionId, responseId: r.id, callId: call.id, action: tool.action, arguments: args, cwd });
  const settlement = attempt.settlementOf(call.id);
  if (settlement?.type === "approval") return "reply" in settlement ? { reply: settlement.reply } : approvedOutcome(settlement.approved, hash);
  if (attempt.stepOf(`grant:${call.id}`)?.status === "completed") return { edit: null };
  // Only the kinds of grant the agent allows now: turning one off stops the existing ones too.
  const scopes = grantScopesOf(attempt.agent);
  // A predicate's risk is the operator's word and wins over the reviewer's estimate.
  const risk = tool.fixedRisk ?? verdict?.risk ?? tool.risk(args);
  const granted = await attempt.commit(async (c) => {
    if (scopes.length > 0) {
      const opHash = operationHash({ userId: r.userId, agent: attempt.agent.name, action: tool.action, arguments: args });
      const grant = await claimGrant(c.tx, { userId: r.userId, agent: attempt.agent.name, operationHash: opHash, sessionId: r.sessionId, scopes, now: attempt.deps.now() });
      if (grant) {
        // The use is a step (a resumed attempt does not count it twice) and names the grant.
        const event = { type: "grant.used", data: { grantId: grant.id, callId: call.id, toolName: call.name, action: tool.action, scope: grant.scope, uses: grant.uses }, frame: false };
        attempt.buffer(`grant:${call.id}`, "completed", { grantId: grant.id }, [event]);
        recordGatePass(attempt, call, { args, cwd, tool, risk, live: tool.live ?? "always", shadow: tool.shadow ?? null }, "grant", "approve");
        return true;
      }
    }
    const approval = await openApproval(c.tx, {
      id: newId("approval"),
      responseId: r.id,
      sessionId: r.sessionId,
      userId: r.userId,
      agent: attempt.agent.name,
      callId: call.id,
      toolName: tool.name,
      action: tool.action,
      arguments: args,
      cwd,
      bindingHash: hash,
      risk,
      requiredApprovals: requiredApprovalsFor(attempt.agent.quorum, risk),
      message: tool.describe(args, cwd),
      reviewer: verdict?.reviewer ?? null,
      reviewerRationale: verdict?.rationale ?? null,
      expiresAt: new Date(attempt.deps.now().getTime() + r.approvalTtlMs),
      shadow: tool.shadow ?? null,
    });
    if (!approval) throw new Error("approval insert returned nothing");
    if (tool.shadow) attempt.bufferEvent(shadowEvent({ callId: call.id, toolName: tool.name, action: tool.action, live: tool.live ?? "always", shadow: tool.shadow }));
    const action = approvalAction(approval);
    await attempt.suspendIn(c, { type: "approval.requested", data: { approval: action }, frame: true }, action, { type: "approval", id: approval.id, callId: call.id });
    return false;
  });
  if (granted) return { edit: null };
  throw new AttemptSuspended();
}

/** A client tool: its submitted output once a submission resumed the run; otherwise a request the run suspends on. */
export async function awaitClientTool(attempt: Attempt, call: TToolCall, args: unknown, tool: TClientTool): Promise<unknown> {
  const settlement = attempt.settlementOf(call.id);
  if (settlement?.type === "client_tool") return recordToolResult(attempt, call, settlement.output);
  const r = attempt.response;
  await attempt.commit(async (c) => {
    const request = await openClientToolRequest(c.tx, {
      id: newId("client_tool"),
      responseId: r.id,
      sessionId: r.sessionId,
      userId: r.userId,
      callId: call.id,
      name: tool.name,
      arguments: args,
      privateInput: Boolean(tool.handlePrivateInput),
      inputSchema: tool.handlePrivateInput ? (tool.inputJsonSchema ?? null) : null,
      expiresAt: new Date(attempt.deps.now().getTime() + r.clientToolTtlMs),
    });
    if (!request) throw new Error("client tool insert returned nothing");
    const action = clientToolAction(request);
    await attempt.suspendIn(c, { type: "client_tool.requested", data: { clientTool: action }, frame: true }, action, { type: "client_tool", id: request.id, callId: call.id });
  });
  throw new AttemptSuspended();
}

/**
 * Asks a person through a question whose id is derived from the run and the tool call, so a
 * retried call finds the same question. One pending question per session.
 */
async function awaitQuestion(attempt: Attempt, call: TToolCall, args: unknown, tool: TQuestionTool): Promise<unknown> {
  const settlement = attempt.settlementOf(call.id);
  if (settlement?.type === "question") return recordToolResult(attempt, call, tool.present(args, settlement.questions as never, settlement.settled));
  const compiled = tool.compile(args);
  if (!compiled.ok) return recordToolResult(attempt, call, compiled.result);
  const r = attempt.response;
  const id = deriveQuestionId(r.id, call.id);
  const busy = await attempt.commit(async (c) => {
    const pending = await pendingQuestionOfSession(c.tx, r.sessionId);
    if (pending) return true;
    const question = await insertQuestion(c.tx, attempt.deps.now(), {
      id,
      kind: tool.questionKind,
      questions: compiled.questions,
      creator: { userId: r.userId, sessionId: r.sessionId, responseId: r.id, callId: call.id },
      timeoutMs: compiled.timeoutMs,
    });
    // Another run of the session registered its question concurrently: this one is busy too.
    if (!question) return true;
    const [record] = await toRecords(c.tx, [question]);
    const action: TRequiredAction = { type: "question", id, callId: r.id, questions: question.questions, expiresAt: question.expiresAt.toISOString() };
    await attempt.suspendIn(c, { type: "question.requested", data: { question: record }, frame: true }, action, { type: "question", id, callId: call.id });
    c.announce({ k: "question", change: { questionId: id, status: "pending" } });
    return false;
  });
  if (busy) return recordToolResult(attempt, call, { error: "Another question is already waiting for an answer in this session; wait for it before asking again." });
  throw new AttemptSuspended();
}
