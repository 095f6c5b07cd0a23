/**
 * Actions a caller runs itself (external approvals, `POST /v1/approvals`) and the coding-agent
 * tools a permission prompt asks about (`approval_prompt`): their names and how they are checked.
 */

/** An action's name: 1–128 characters from `A–Z a–z 0–9 _ . : / -` (`send_email`, `payments.refund`, `deploy:prod`). */
export const ACTION_NAME = /^[A-Za-z0-9_.:/-]{1,128}$/;
export const ACTION_NAME_RULE = "1–128 characters from A–Z a–z 0–9 _ . : / -";

/** Arguments of an action larger than this (canonical JSON) are refused: approvers read them in the console, Slack and mail. */
export const MAX_ACTION_ARGUMENTS_BYTES = 64 * 1024;

/** An entry of an agent's `actions`: an action name, `*`, or a pattern with `*` (`coding:*`). */
export const ACTION_PATTERN = /^[A-Za-z0-9_.:/*-]{1,128}$/;

/** The tools of a coding agent's permission prompt that have their own rendering (server/core/operation-view.ts). */
export const CODING_TOOLS = ["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "Read", "Glob", "Grep", "WebFetch", "WebSearch", "Task"] as const;

/** Coding tools are actions `coding:<tool>` of the agent the MCP connection names. */
export const CODING_PREFIX = "coding:";

const PLAIN_TOOL = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MCP_TOOL = /^mcp__[A-Za-z0-9_-]+?__[A-Za-z0-9_-]+$/;

/**
 * The action of a coding tool (`Bash` → `coding:Bash`, `mcp__github__create_issue` →
 * `coding:mcp__github__create_issue`), or why the name is refused: it must be a plain identifier
 * or `mcp__<server>__<tool>`, and the action must stay a valid action name.
 */
export function codingAction(toolName: string): { ok: true; action: string } | { ok: false; why: string } {
  const isMcp = toolName.startsWith("mcp__");
  if (isMcp ? !MCP_TOOL.test(toolName) : !PLAIN_TOOL.test(toolName)) {
    const shape = isMcp ? "an MCP tool is named mcp__<server>__<tool> (letters, digits, _ and -)" : "a tool name is a plain identifier (letters, digits and _, not starting with a digit)";
    return { ok: false, why: `tool_name ${JSON.stringify(toolName.slice(0, 200))} is not a coding tool's name: ${shape}.` };
  }
  const action = `${CODING_PREFIX}${toolName}`;
  if (!ACTION_NAME.test(action)) return { ok: false, why: `tool_name is ${toolName.length} characters; at most ${128 - CODING_PREFIX.length} are accepted.` };
  return { ok: true, action };
}
