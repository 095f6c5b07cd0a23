import { MiddlewareRegistrationError } from "./errors";

/** The manifest slice the registry reads: which runtimes the plugin declares middleware for. */
export type TToolResultMiddlewarePlugin = {
  id: string;
  manifest: { contracts: { agentToolResultMiddleware: readonly string[] } };
};

/** Which runtimes and tools one registration targets. */
export type TToolResultMiddlewareOptions = {
  /** A subset of the manifest's declared runtimes; omitted means every supported declared runtime. */
  runtimes?: readonly string[];
  /** Canonical tool ids; omitted means every tool. */
  matcher?: readonly string[];
};

/** One validated (runtimes, matcher) pair; `tools` null matches every tool. */
export type TResolvedMiddlewareTarget = { runtimes: ReadonlySet<string>; tools: ReadonlySet<string> | null };

const CANONICAL_ID = /^[a-z0-9_.:-]+$/;

/** Whether `value` is a canonical runtime or tool id: trimmed, lowercase `[a-z0-9_.:-]`, non-empty. */
export const isCanonicalId = (value: unknown): value is string => typeof value === "string" && CANONICAL_ID.test(value);

/** Lowercases and trims a runtime tool name for matching against canonical matcher ids. */
export const canonicalToolName = (toolName: string): string => toolName.trim().toLowerCase();

/**
 * Validates one registration against the host's supported runtimes and the plugin's manifest.
 * Throws {@link MiddlewareRegistrationError} with a sentence naming the plugin and the fix.
 */
export function resolveMiddlewareTarget(
  plugin: TToolResultMiddlewarePlugin,
  supported: ReadonlySet<string>,
  options: TToolResultMiddlewareOptions | undefined,
): TResolvedMiddlewareTarget {
  if (typeof plugin.id !== "string" || plugin.id.trim() === "") {
    throw new MiddlewareRegistrationError(`Tool-result middleware needs a plugin id; got ${JSON.stringify(plugin.id)}.`);
  }
  const declared = plugin.manifest?.contracts?.agentToolResultMiddleware;
  if (!Array.isArray(declared)) {
    throw new MiddlewareRegistrationError(
      `Plugin ${plugin.id} does not declare contracts.agentToolResultMiddleware in its manifest, so it cannot register tool-result middleware.`,
    );
  }
  return { runtimes: resolveRuntimes(plugin.id, declared, supported, options?.runtimes), tools: resolveMatcher(plugin.id, options?.matcher) };
}

function resolveRuntimes(
  pluginId: string,
  declared: readonly string[],
  supported: ReadonlySet<string>,
  requested: readonly string[] | undefined,
): ReadonlySet<string> {
  if (requested === undefined) {
    const runtimes = new Set(declared.filter((runtime) => supported.has(runtime)));
    if (runtimes.size === 0) {
      throw new MiddlewareRegistrationError(
        `Plugin ${pluginId} declares no supported runtime in contracts.agentToolResultMiddleware (supported: ${[...supported].join(", ")}).`,
      );
    }
    return runtimes;
  }
  if (!Array.isArray(requested) || requested.length === 0) {
    throw new MiddlewareRegistrationError(
      `Plugin ${pluginId} registered tool-result middleware for an empty runtime list; omit runtimes to use every declared runtime.`,
    );
  }
  for (const runtime of requested) {
    if (!supported.has(runtime)) {
      throw new MiddlewareRegistrationError(
        `Plugin ${pluginId} targets unsupported runtime ${JSON.stringify(runtime)}; supported runtimes are ${[...supported].join(", ")}.`,
      );
    }
    if (!declared.includes(runtime)) {
      throw new MiddlewareRegistrationError(
        `Plugin ${pluginId} targets runtime ${runtime}, which its manifest does not declare in contracts.agentToolResultMiddleware.`,
      );
    }
  }
  return new Set(requested);
}

function resolveMatcher(pluginId: string, matcher: readonly string[] | undefined): ReadonlySet<string> | null {
  if (matcher === undefined) return null;
  if (!Array.isArray(matcher) || matcher.length === 0) {
    throw new MiddlewareRegistrationError(
      `Plugin ${pluginId} registered tool-result middleware with an empty matcher; omit matcher to match every tool.`,
    );
  }
  for (const toolId of matcher) {
    if (!isCanonicalId(toolId)) {
      const hint = typeof toolId === "string" && isCanonicalId(canonicalToolName(toolId)) ? ` (use ${JSON.stringify(canonicalToolName(toolId))})` : "";
      throw new MiddlewareRegistrationError(
        `Plugin ${pluginId} used matcher entry ${JSON.stringify(toolId)}, which is not a canonical tool id${hint}; tool ids are lowercase [a-z0-9_.:-].`,
      );
    }
  }
  return new Set(matcher);
}
