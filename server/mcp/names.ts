import { createHash } from "node:crypto";

/** Tool names models accept: letters, digits, `_` and `-`, at most 64 characters. */
const MAX_TOOL_NAME = 64;

const sanitize = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, "_");

/** The action an MCP tool's approvals bind to and policies name: `mcp:<server>.<tool>`. */
export const mcpAction = (server: string, tool: string): string => `mcp:${server}.${tool}`;

/**
 * The name the agent calls an MCP tool by: `mcp_<server>_<tool>`, sanitized. A name that had to
 * be shortened or changed gets a short hash of the original, so two tools never share a name.
 */
export function mcpToolName(server: string, tool: string): string {
  const plain = `mcp_${sanitize(server)}_${sanitize(tool)}`;
  if (plain === `mcp_${server}_${tool}` && plain.length <= MAX_TOOL_NAME) return plain;
  const hash = createHash("sha256").update(`${server}\u0000${tool}`).digest("hex").slice(0, 8);
  return `${plain.slice(0, MAX_TOOL_NAME - 9)}_${hash}`;
}

/** Does `pattern` (with `*` matching any run of characters) match `value` exactly? */
export function globMatches(pattern: string, value: string): boolean {
  const re = new RegExp(`^${pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
  return re.test(value);
}
