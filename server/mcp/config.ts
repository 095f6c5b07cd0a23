import { z } from "zod";

/** Who decides before an MCP tool runs (the same vocabulary as the agent's approval policy). */
export const ZMcpPolicy = z.enum(["always", "never", "review"]);
export type TMcpPolicy = z.infer<typeof ZMcpPolicy>;

/** A server name: it appears in actions (`mcp:<server>.<tool>`) and tool names (`mcp_<server>_<tool>`). */
export const ZMcpServerName = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, "name must be 1–32 lowercase letters, digits, _ or -, starting with a letter");

const ZCommon = {
  name: ZMcpServerName,
  /**
   * MCP tool name (or `*`) → policy. Consulted after the agent's exact entries (tool name or
   * action) and before the agent's wildcard patterns. Tools nobody names need a person (`always`).
   */
  approval: z.record(z.string().min(1).max(128), ZMcpPolicy).optional(),
  /** How long one tool call may take, elicitations included (default 10 minutes). */
  timeoutMs: z.number().int().min(1000).max(24 * 3_600_000).optional(),
};

export const ZMcpServerConfig = z.discriminatedUnion("transport", [
  z.strictObject({
    ...ZCommon,
    transport: z.literal("stdio"),
    command: z.string().min(1).max(4096),
    args: z.array(z.string().max(4096)).max(64).optional(),
    /** Added to the SDK's safe default environment (PATH, HOME, ...); the server's own secrets never leak to it. */
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).max(4096).optional(),
  }),
  z.strictObject({
    ...ZCommon,
    transport: z.literal("http"),
    url: z.url({ protocol: /^https?$/ }),
    headers: z.record(z.string(), z.string()).optional(),
  }),
]);
export type TMcpServerConfig = z.infer<typeof ZMcpServerConfig>;

export const ZMcpServers = z
  .array(ZMcpServerConfig)
  .max(16)
  .superRefine((servers, ctx) => {
    const names = servers.map((s) => s.name);
    if (new Set(names).size !== names.length) ctx.addIssue({ code: "custom", message: "MCP server names must be unique" });
  });

/** The agent's MCP servers: a list, or a function read when a connection is needed (e.g. from the environment). */
export type TMcpServersSource = readonly TMcpServerConfig[] | (() => readonly TMcpServerConfig[]);

export const DEFAULT_MCP_TIMEOUT_MS = 10 * 60_000;

/**
 * The MCP servers named in `COUNTERSIGN_MCP_SERVERS` (a JSON array of server configs), read on
 * each call so a process can be configured before its first MCP connection. An invalid value
 * configures no server and says why once in the error it throws.
 */
export function mcpServersFromEnv(raw: string | undefined): TMcpServerConfig[] {
  if (!raw || raw.trim() === "") return [];
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error("COUNTERSIGN_MCP_SERVERS is not valid JSON.");
  }
  const parsed = ZMcpServers.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`COUNTERSIGN_MCP_SERVERS is invalid: ${issue?.path.join(".") || "value"}: ${issue?.message ?? "invalid"}.`);
  }
  return parsed.data;
}

/** Resolves an agent's MCP server list (empty when it has none). */
export function resolveMcpServers(source: TMcpServersSource | undefined): readonly TMcpServerConfig[] {
  if (!source) return [];
  return typeof source === "function" ? source() : source;
}
