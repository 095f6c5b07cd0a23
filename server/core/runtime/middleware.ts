import {
  canonicalToolName,
  isCanonicalId,
  resolveMiddlewareTarget,
  type TResolvedMiddlewareTarget,
  type TToolResultMiddlewareOptions,
  type TToolResultMiddlewarePlugin,
} from "./middleware-registration";

/** The runtime ids the host supports for tool-result middleware unless told otherwise. */
export const DEFAULT_TOOL_RESULT_RUNTIMES = ["agentsapi", "codex", "openclaw", "countersign"] as const;

/** A tool's result as the harness is about to feed it back to the model. */
export type TToolResultInput = { toolName: string; callId: string; result: unknown; isError: boolean };

/** What a middleware sees: the result so far, its runtime, and the untouched original. */
export type TToolResultMiddlewareEvent = TToolResultInput & {
  runtimeId: string;
  original: Readonly<TToolResultInput>;
};

/** A replacement result; `isError: true` marks a failure, but middleware cannot clear an original one. */
export type TToolResultPatch = { result: unknown; isError?: boolean };

/** An async tool-result transform; returning undefined keeps the result unchanged. */
export type TToolResultMiddleware = (
  event: TToolResultMiddlewareEvent,
) => TToolResultPatch | undefined | Promise<TToolResultPatch | undefined>;

/** A middleware that threw, rejected or returned something that is not a patch; it was skipped. */
export type TToolResultMiddlewareFailure = { pluginId: string; registration: number; toolName: string; callId: string; error: unknown };

/** The result to feed back to the model, with the facts middleware must not erase. */
export type TAppliedToolResult = {
  result: unknown;
  /** True whenever the original execution failed, whatever middleware returned. */
  isError: boolean;
  /** The original failing result, present exactly when the execution failed. */
  originalError?: unknown;
  /** Plugin ids whose middleware returned a patch, in order. */
  appliedBy: string[];
  skipped: TToolResultMiddlewareFailure[];
  /** Read from the original result's `details.messageDelivery.sourceReplyDelivered` before any transform. */
  sourceReplyDelivered: boolean;
};

/** A registration as validated, for introspection. */
export type TToolResultMiddlewareRegistration = { registration: number; pluginId: string; runtimes: string[]; matcher: string[] | null };

/** Options for {@link createToolResultMiddlewareRegistry}. */
export type TToolResultMiddlewareRegistryOptions = {
  supportedRuntimes?: readonly string[];
  onMiddlewareError?: (failure: TToolResultMiddlewareFailure) => void;
};

/** The registry of runtime-neutral tool-result middleware. */
export type TToolResultMiddlewareRegistry = {
  /**
   * Registers `handler` for the (runtimes, matcher) pair in `options`; each registration keeps its
   * own pair. Throws MiddlewareRegistrationError for an empty runtime list, a runtime missing from
   * the manifest or unsupported by the host, or a non-canonical matcher. Returns an unregister function.
   */
  register: (plugin: TToolResultMiddlewarePlugin, handler: TToolResultMiddleware, options?: TToolResultMiddlewareOptions) => () => void;
  /** Runs matching middleware in registration order; never loses the result or its original failure. */
  apply: (runtimeId: string, input: TToolResultInput) => Promise<TAppliedToolResult>;
  registrations: () => TToolResultMiddlewareRegistration[];
};

type TEntry = { registration: number; pluginId: string; target: TResolvedMiddlewareTarget; handler: TToolResultMiddleware };

/** Creates the tool-result middleware registry for the given supported runtime ids. */
export function createToolResultMiddlewareRegistry(options: TToolResultMiddlewareRegistryOptions = {}): TToolResultMiddlewareRegistry {
  const supportedList = options.supportedRuntimes ?? DEFAULT_TOOL_RESULT_RUNTIMES;
  if (supportedList.length === 0 || !supportedList.every(isCanonicalId)) {
    throw new TypeError("supportedRuntimes must be a non-empty list of canonical runtime ids.");
  }
  const supported: ReadonlySet<string> = new Set(supportedList);
  let entries: TEntry[] = [];
  let nextRegistration = 1;

  const report = (failure: TToolResultMiddlewareFailure): void => {
    try {
      options.onMiddlewareError?.(failure);
    } catch {
      // Diagnostics only: a failing reporter must not cost the tool result.
    }
  };

  return {
    register(plugin, handler, registrationOptions) {
      if (typeof handler !== "function") throw new TypeError("Tool-result middleware must be a function.");
      const entry: TEntry = {
        registration: nextRegistration++,
        pluginId: plugin.id,
        target: resolveMiddlewareTarget(plugin, supported, registrationOptions),
        handler,
      };
      entries = [...entries, entry];
      return () => {
        entries = entries.filter((e) => e !== entry);
      };
    },

    async apply(runtimeId, input) {
      if (!supported.has(runtimeId)) throw new TypeError(`Runtime ${JSON.stringify(runtimeId)} is not supported for tool-result middleware.`);
      const original: Readonly<TToolResultInput> = Object.freeze({ ...input });
      const toolId = canonicalToolName(input.toolName);
      const outcome: TAppliedToolResult = {
        result: input.result,
        isError: input.isError,
        appliedBy: [],
        skipped: [],
        sourceReplyDelivered: readSourceReplyDelivered(input.result),
      };
      // Snapshot: a registration added while this result is in flight applies from the next result on.
      for (const entry of entries) {
        if (!entry.target.runtimes.has(runtimeId)) continue;
        if (entry.target.tools !== null && !entry.target.tools.has(toolId)) continue;
        const fail = (error: unknown): void => {
          const failure = { pluginId: entry.pluginId, registration: entry.registration, toolName: input.toolName, callId: input.callId, error };
          outcome.skipped.push(failure);
          report(failure);
        };
        try {
          const patch = await entry.handler({ ...input, result: outcome.result, isError: outcome.isError, runtimeId, original });
          if (patch === undefined) continue;
          if (typeof patch !== "object" || patch === null || !("result" in patch)) {
            fail(new TypeError(`Middleware of plugin ${entry.pluginId} returned something other than { result }.`));
            continue;
          }
          outcome.result = patch.result;
          outcome.isError = outcome.isError || patch.isError === true;
          outcome.appliedBy.push(entry.pluginId);
        } catch (error) {
          fail(error);
        }
      }
      // Presentation may rewrite content, never the fact that the execution failed.
      if (original.isError) {
        outcome.isError = true;
        outcome.originalError = original.result;
      }
      return outcome;
    },

    registrations: () =>
      entries.map((e) => ({
        registration: e.registration,
        pluginId: e.pluginId,
        runtimes: [...e.target.runtimes],
        matcher: e.target.tools === null ? null : [...e.target.tools],
      })),
  };
}

function readSourceReplyDelivered(result: unknown): boolean {
  const details = (result as { details?: { messageDelivery?: { sourceReplyDelivered?: unknown } } } | null | undefined)?.details;
  return details?.messageDelivery?.sourceReplyDelivered === true;
}
