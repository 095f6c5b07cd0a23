import { createHash } from "node:crypto";
import { z } from "zod";
import type { Db } from "../../db/client";
import type { TFinalizeToolAvailability, TNativeRefusalReason, TNativeToolDecision, TNativeToolRequest, TSurfaceTool, TToolSurfaceCapabilities } from "../../plugin-sdk/tool-surface";
import { completedStepResults } from "../../db/repositories/steps";
import { canonicalJson } from "../core/binding";
import { DomainError } from "../core/errors";
import { argsSchemaFromJson } from "../tools/arguments-json-schema";
import type { TClientTool, THostTool } from "../tools/types";
import { withEditNotice } from "./approval-outcome";
import { type Attempt, AttemptSuspended, type TToolCall } from "./attempt";
import { awaitClientTool, passGate, rewriteToolResult } from "./tool-calls";
import { confineCwd } from "./workspace";

type TAllowed = Extract<TNativeToolDecision, { allow: true }>;

/**
 * A decision as its step stores it: the directory workspace-relative (re-resolved whenever it is
 * returned); `requestedArguments` when an approver edited the call, `clientTool` when the client runs it.
 */
type TStoredAllow = Omit<TAllowed, "cwd" | "replayed" | "client"> & { cwd: string; requestedArguments?: Record<string, unknown>; clientTool?: true };
type TStoredDecision = Extract<TNativeToolDecision, { allow: false }> | TStoredAllow;

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** What identifies a native call across attempts: its name, arguments and requested cwd (with its occurrence: the call id). */
const nativeCallHash = (request: TNativeToolRequest): string =>
  createHash("sha256")
    .update(canonicalJson({ toolName: request.toolName, args: request.args, cwd: request.cwd ?? null }))
    .digest("hex")
    .slice(0, 24);

const ZAnyArgs = z.record(z.string(), z.unknown());

/**
 * A native tool as the host's policy, grants and approvals see it (`native:<name>`; nothing here
 * runs). `argsSchema` is the plugin's `parameters` when it gave them (what an approver's edit is
 * validated with); `cwd` is the call's own directory, which an edit of the arguments keeps.
 */
function approvalTarget(name: string, options: { argsSchema?: z.ZodType; cwd?: string | null } = {}): THostTool {
  return {
    kind: "host",
    name,
    description: `native tool ${name}`,
    argsSchema: options.argsSchema ?? ZAnyArgs,
    action: `native:${name}`,
    cwdOf: () => options.cwd ?? null,
    describe: (a, c) => `Run the native tool ${name} with ${JSON.stringify(a).slice(0, 400)}${c && c !== "." ? ` in ${c}` : ""}`,
    risk: () => "medium",
    execute: async () => {
      throw new Error("native tools run in their harness");
    },
  };
}

/** The step holding the argument schema a native call was decided under (what its approval's edit is validated with). */
const schemaKey = (callId: string) => `native-schema:${callId}`;

/**
 * The argument schemas the plugins gave for the native calls among `approvals` (stored with each
 * call's decision), by approval id: what an edit is validated with and the console's form is built from.
 */
export async function nativeParametersOf(
  db: Db,
  approvals: ReadonlyArray<{ id: string; responseId: string; callId: string; toolName: string; action: string }>,
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  const native = approvals.filter((a) => a.action === `native:${a.toolName}`);
  if (native.length === 0) return found;
  const rows = await completedStepResults(
    db,
    native.map((a) => ({ responseId: a.responseId, key: schemaKey(a.callId) })),
  );
  const byStep = new Map(rows.map((r) => [`${r.responseId} ${r.key}`, (r.result as { parameters?: unknown } | null)?.parameters]));
  for (const a of native) {
    const parameters = byStep.get(`${a.responseId} ${schemaKey(a.callId)}`);
    if (parameters !== null && typeof parameters === "object" && !Array.isArray(parameters)) found.set(a.id, parameters as Record<string, unknown>);
  }
  return found;
}

/**
 * The tool an approver's edit of a native call is validated with, exactly as a host tool's
 * (server/services/decision-options.ts): the schema the plugin gave for the call. Null when the
 * approval is not a native call or its plugin gave no schema.
 */
export async function nativeEditTarget(db: Db, approval: { id: string; responseId: string; callId: string; toolName: string; action: string; cwd: string | null }): Promise<THostTool | null> {
  const argsSchema = argsSchemaFromJson((await nativeParametersOf(db, [approval])).get(approval.id));
  return argsSchema ? approvalTarget(approval.toolName, { argsSchema, cwd: approval.cwd }) : null;
}

/**
 * A client-executed native tool as the host's client-tool requests see it: the arguments the loop
 * asked with (as decided), any JSON as the client's output (the plugin declares no output schema).
 */
export function nativeClientTool(agent: { nativeTools?: readonly string[] } | undefined, name: string): TClientTool | null {
  if (!agent?.nativeTools?.includes(name)) return null;
  return { kind: "client", name, description: `native tool ${name}, run by the client`, argsSchema: ZAnyArgs, outputSchema: z.unknown() };
}

/**
 * Builds the tool-surface capabilities of one native-loop attempt. Every call after `close()` (the
 * attempt settled, or the loop returned) fails closed with a sentence; a call after the run
 * suspended does too. Each decision is a step (`native:<callId>`), so a re-run attempt gets the
 * recorded decision for an identical call instead of asking again.
 */
export function createToolSurface(attempt: Attempt, declared: readonly string[]): TToolSurfaceCapabilities & { close: () => void; suspended: () => boolean } {
  let closed = false;
  let suspended = false;
  let surface: { tools: Set<string>; executable: Set<string>; schemas: Map<string, Readonly<Record<string, unknown>>>; client: Set<string> } = {
    tools: new Set(declared),
    executable: new Set(declared),
    schemas: new Map(),
    client: new Set(),
  };
  const occurrences = new Map<string, number>();
  const assertOpen = (what: string) => {
    if (closed) throw new DomainError("conflict", `${what}: this attempt has settled; its host capabilities are closed.`);
    if (suspended) throw new DomainError("conflict", `${what}: this attempt is waiting for a decision; nothing more runs until the run resumes.`);
  };

  /** A stored allow with its directory resolved again now: a directory swapped for a symlink since is refused. */
  const resolved = (stored: TStoredDecision, replayed?: { output?: unknown }): TNativeToolDecision => {
    if (!stored.allow) return stored;
    const now = confineCwd(attempt.workspaceDir, stored.cwd);
    if (!now.ok) return { allow: false, callId: stored.callId, toolName: stored.toolName, reason: "cwd_refused", message: `${now.message} The tool ${stored.toolName} was not run.` };
    return { allow: true, callId: stored.callId, toolName: stored.toolName, args: stored.args, cwd: now.absolute, ...(replayed ? { replayed } : {}) };
  };

  /**
   * A client-executed call after the gate allowed it: the client's recorded output, or the same
   * client-tool request hosted tools open (`requires_action` on /v1), which the run suspends on.
   */
  const runOnClient = async (call: TToolCall, decision: TAllowed): Promise<TNativeToolDecision> => {
    const done = attempt.stepOf(`tool:${call.id}`);
    if (done?.status === "completed") return { ...decision, client: { output: done.result } };
    const tool = nativeClientTool(attempt.agent, call.name);
    if (!tool) throw new DomainError("invalid_request", `runBeforeToolCall: ${call.name} is not one of the agent's native tools.`);
    const output = await awaitClientTool(attempt, { ...call, arguments: decision.args }, decision.args, tool);
    // The client's output is durable before the loop feeds it to its model.
    await attempt.commit();
    return { ...decision, client: { output } };
  };

  const decide = async (call: TToolCall, request: TNativeToolRequest, decided: () => Promise<TStoredDecision>): Promise<TNativeToolDecision> => {
    const key = `native:${call.id}`;
    const done = attempt.stepOf(key);
    if (done?.status === "completed") {
      const result = attempt.stepOf(`native-result:${call.id}`);
      return resolved(done.result as TStoredDecision, result?.status === "completed" ? { output: (result.result as { output: unknown }).output } : {});
    }
    const decision = await decided();
    await attempt.step(key, async (record) => {
      record.item({ type: "tool_call", id: call.id, name: call.name, arguments: request.args });
      record.frame("response.tool_call", { id: call.id, name: call.name, arguments: request.args });
      if (!decision.allow) {
        const output = { error: decision.message, reason: decision.reason };
        record.item({ type: "tool_result", callId: call.id, name: call.name, output });
        record.frame("response.tool_result", { callId: call.id, name: call.name, output });
      }
      record.event("native_tool.decision", {
        callId: call.id,
        toolName: call.name,
        allow: decision.allow,
        ...(decision.allow ? { edited: canonicalJson(decision.args) !== canonicalJson(request.args), cwd: decision.cwd } : { reason: decision.reason, message: decision.message }),
      });
      return decision;
    });
    // The decision is durable before the loop acts on it.
    await attempt.commit();
    return resolved(decision);
  };

  const runBeforeToolCall = async (request: TNativeToolRequest): Promise<TNativeToolDecision> => {
    assertOpen("runBeforeToolCall");
    attempt.assertNotCancelled();
    if (!request || typeof request.toolName !== "string" || !TOOL_NAME.test(request.toolName)) {
      throw new DomainError("invalid_request", "runBeforeToolCall: toolName must be 1–64 letters, digits, '_', '.' or '-'.");
    }
    if (request.args === null || typeof request.args !== "object" || Array.isArray(request.args)) throw new DomainError("invalid_request", `runBeforeToolCall(${request.toolName}): args must be a JSON object.`);
    if (request.cwd !== undefined && typeof request.cwd !== "string") throw new DomainError("invalid_request", `runBeforeToolCall(${request.toolName}): cwd must be a string.`);
    // The same call at the same occurrence in the attempt has the same id in every attempt of the run.
    const hash = nativeCallHash(request);
    const occurrence = occurrences.get(hash) ?? 0;
    occurrences.set(hash, occurrence + 1);
    const call: TToolCall = { id: `native_${hash}_${occurrence}`, name: request.toolName, arguments: request.args };
    const refuse = (reason: TNativeRefusalReason, message: string): TStoredDecision => ({ allow: false, callId: call.id, toolName: call.name, reason, message });
    try {
      const decision = await decide(call, request, async () => {
        if (!surface.tools.has(request.toolName)) return refuse("not_on_surface", `The tool ${request.toolName} is not on this attempt's tool surface; it was not run.`);
        if (!surface.executable.has(request.toolName)) return refuse("not_executable", `The tool ${request.toolName} may not run in this attempt (toolExecutionAllow); it was not run.`);
        // The operation's own directory is confined to the session workspace before anyone is asked.
        const requested = confineCwd(attempt.workspaceDir, request.cwd);
        if (!requested.ok) return refuse("cwd_refused", `${requested.message} The tool ${request.toolName} was not run.`);
        const cwd = request.cwd === undefined ? null : requested.relative;
        const tool = approvalTarget(request.toolName);
        // The schema the plugin gave for this tool commits with the approval, so an approver's edit is validated against it.
        const parameters = surface.schemas.get(request.toolName);
        if (parameters && !attempt.stepOf(schemaKey(call.id))) attempt.buffer(schemaKey(call.id), "completed", { parameters });
        // The same gate as the host's own tools: policy and predicates, the exec reviewer, grants and a person.
        const gate = await passGate(attempt, call, request.args, cwd, tool);
        if (gate.kind === "reviewer_denied") {
          // The reviewer's rationale and the seed's rejection guidance, as the host's own exec returns them.
          const { rationale, guidance } = gate.verdict;
          return { ...refuse("reviewer_denied", `The exec reviewer denied this call; it was not run. ${rationale} ${guidance}`.trim()), rationale, guidance };
        }
        if (gate.kind === "replied") return refuse("denied", gate.reply);
        const args = (gate.edit?.arguments as Record<string, unknown> | undefined) ?? request.args;
        const runCwd = gate.edit ? gate.edit.cwd : cwd;
        // An approver's edited directory is confined again (and every returned decision re-resolves it).
        const final = confineCwd(attempt.workspaceDir, runCwd);
        if (!final.ok) return refuse("cwd_refused", `${final.message} The tool ${request.toolName} was not run.`);
        return {
          allow: true,
          callId: call.id,
          toolName: call.name,
          args,
          cwd: final.relative,
          ...(gate.edit ? { requestedArguments: request.args } : {}),
          ...(surface.client.has(request.toolName) ? { clientTool: true as const } : {}),
        };
      });
      const stored = attempt.stepOf(`native:${call.id}`)?.result as TStoredDecision | undefined;
      return decision.allow && stored?.allow && stored.clientTool ? await runOnClient(call, decision) : decision;
    } catch (error) {
      if (error instanceof AttemptSuspended) suspended = true;
      throw error;
    }
  };

  return {
    finalizeAgentToolAvailability: <T extends TSurfaceTool>(options: TFinalizeToolAvailability<T>): T[] => {
      assertOpen("finalizeAgentToolAvailability");
      if (!options || !Array.isArray(options.tools)) throw new DomainError("invalid_request", "finalizeAgentToolAvailability: tools must be an array.");
      const names = options.tools.map((t) => t?.name);
      for (const name of names) {
        if (typeof name !== "string" || !declared.includes(name)) {
          throw new DomainError("invalid_request", `finalizeAgentToolAvailability: ${JSON.stringify(name)} is not one of the agent's declared native tools (${declared.join(", ") || "none"}); the surface adds no tools.`);
        }
      }
      const schemas = new Map<string, Readonly<Record<string, unknown>>>();
      const client = new Set<string>();
      for (const tool of options.tools) {
        if (tool.parameters !== undefined) {
          if (tool.parameters === null || typeof tool.parameters !== "object" || Array.isArray(tool.parameters) || argsSchemaFromJson(tool.parameters) === null) {
            throw new DomainError("invalid_request", `finalizeAgentToolAvailability: the parameters of ${tool.name} are not a JSON Schema of an object the host can read.`);
          }
          schemas.set(tool.name, tool.parameters);
        }
        if (tool.client !== undefined && typeof tool.client !== "boolean") throw new DomainError("invalid_request", `finalizeAgentToolAvailability: client of ${tool.name} must be a boolean.`);
        if (tool.client) client.add(tool.name);
      }
      const allow = options.toolExecutionAllow;
      if (allow !== undefined && (!Array.isArray(allow) || allow.some((n) => typeof n !== "string"))) throw new DomainError("invalid_request", "finalizeAgentToolAvailability: toolExecutionAllow must be an array of tool names.");
      // Omitted: every supplied tool may run; [] none. A name not supplied allows nothing.
      const executable = new Set(allow === undefined ? names : names.filter((n) => allow.includes(n)));
      surface = { tools: new Set(names), executable, schemas, client };
      const prepared = { tools: Object.freeze([...names]), executable: Object.freeze([...executable]) };
      attempt.capabilities.trajectory.recordEvent("tool_surface.finalized", { tools: [...prepared.tools], executable: [...prepared.executable], client: [...client] });
      options.onPrepared?.(prepared);
      return [...options.tools];
    },
    runBeforeToolCall,
    recordToolResult: async (callId, output) => {
      assertOpen("recordToolResult");
      const decision = attempt.stepOf(`native:${callId}`);
      const stored = decision?.status === "completed" ? (decision.result as TStoredDecision) : null;
      if (!stored?.allow) throw new DomainError("invalid_request", `recordToolResult: ${JSON.stringify(callId)} is not a call the host allowed in this run.`);
      if (stored.clientTool) throw new DomainError("invalid_request", `recordToolResult: ${JSON.stringify(callId)} was run by the client; its result is recorded already.`);
      const key = `native-result:${callId}`;
      const done = attempt.stepOf(key);
      if (done?.status === "completed") return (done.result as { output: unknown }).output;
      // The same middleware and rules as a host tool's result; then the approver's edit notice.
      const call: TToolCall = { id: callId, name: stored.toolName, arguments: stored.args };
      const rewritten = await rewriteToolResult(attempt, call, output);
      const fed = stored.requestedArguments ? withEditNotice(rewritten, stored.requestedArguments, { arguments: stored.args, cwd: stored.cwd, originalArguments: stored.requestedArguments }) : rewritten;
      await attempt.step(key, async (record) => {
        record.item({ type: "tool_result", callId, name: stored.toolName, output: fed });
        record.frame("response.tool_result", { callId, name: stored.toolName, output: fed });
        return { output: fed };
      });
      return fed;
    },
    close: () => {
      closed = true;
    },
    suspended: () => suspended,
  };
}
