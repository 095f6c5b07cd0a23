/**
 * The tool surface of a native-loop attempt (plugin API 1.1): which of its own tools a native
 * loop shows its model and may run, and the host's verdict before each call. server/host/tool-surface.ts
 * implements it.
 */

/** What a native loop asks before it runs one of its own tools. */
export type TNativeToolRequest = {
  toolName: string;
  /** The call's arguments (a JSON object); the approval binds them. */
  args: Record<string, unknown>;
  /** The operation's own working directory (workspace-relative or absolute); default: the workspace. */
  cwd?: string;
};

/** Why the host refused a native call. */
export type TNativeRefusalReason = "invalid_request" | "not_on_surface" | "not_executable" | "cwd_refused" | "reviewer_denied" | "denied";

/**
 * The host's verdict on one native call. `allow`: run it with `args` (an approver may have edited
 * them) in `cwd` (the confined absolute directory). `replayed`: this identical call was decided in
 * an earlier attempt of the run (it was not asked again); `output` is present when the loop
 * reported the call's result then (`recordToolResult`): use it instead of running the tool again.
 * `client` (plugin API 1.2): the tool is client-executed; the connected client ran it and `output`
 * is what it returned: feed that to the model, do not run the tool and record no result.
 */
export type TNativeToolDecision =
  | { allow: true; callId: string; toolName: string; args: Record<string, unknown>; cwd: string; replayed?: { output?: unknown }; client?: { output: unknown } }
  | {
      allow: false;
      callId: string;
      toolName: string;
      reason: TNativeRefusalReason;
      message: string;
      /** `reviewer_denied` only: the exec reviewer's rationale and the rejection guidance (also in `message`). Tell the model both; never ask a person instead. */
      rationale?: string;
      guidance?: string;
    };

/**
 * A tool definition a native loop may show its model. The host reads its `name` and (plugin API
 * 1.2) `parameters`, the JSON Schema of its arguments (an approver's edit is validated against
 * it; without one the arguments cannot be edited), and `client`: the connected client runs it
 * (a client-tool request on `/v1`), not the loop.
 */
export type TSurfaceTool = { name: string; parameters?: Readonly<Record<string, unknown>>; client?: boolean };

/** The final tool surface of an attempt, as `onPrepared` observes it. */
export type TPreparedToolSurface = { tools: readonly string[]; executable: readonly string[] };

export type TFinalizeToolAvailability<T extends TSurfaceTool> = {
  tools: readonly T[];
  /** Names of the supplied tools that may run. Omitted: every supplied tool; `[]`: none (their schemas may still be shown). */
  toolExecutionAllow?: readonly string[];
  /** Synchronous observer of the final surface. */
  onPrepared?: (surface: TPreparedToolSurface) => void;
};

/** The tool-surface capabilities of a native-loop attempt (plugin API 1.1). */
export type TToolSurfaceCapabilities = {
  /**
   * Binds the attempt's tool surface: returns a new array of the same tool objects. Each name must
   * be one of the agent's declared native tools (it adds none). Calling it again replaces the surface.
   */
  finalizeAgentToolAvailability: <T extends TSurfaceTool>(options: TFinalizeToolAvailability<T>) => T[];
  /**
   * Asks the host before running a native tool: surface, working directory, the agent's policy,
   * the exec reviewer, grants and a person's approval, exactly as for the host's own tools. When a
   * person must decide, the run suspends: this throws the host's suspension, which the loop must
   * let propagate; the attempt is run again after the decision.
   */
  runBeforeToolCall: (request: TNativeToolRequest) => Promise<TNativeToolDecision>;
  /**
   * Records what an allowed call returned (a tool_result item), so a re-run attempt gets it back
   * instead of running the call again. Returns what to feed the model (plugin API 1.2): the result
   * after the host's tool-result middleware for runtime `countersign` (and the approver's edit
   * notice when the arguments were edited), the same as `replayed.output` later.
   */
  recordToolResult: (callId: string, output: unknown) => Promise<unknown>;
};
