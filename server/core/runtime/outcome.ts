/** How a completed turn without visible assistant text ended; null when it needs no fallback. */
export type TTerminalOutcome = "empty" | "reasoning-only" | "planning-only";

/** What the harness observed for the completed turn. */
export type TTerminalOutcomeInput = {
  visibleText: string;
  reasoningText?: string | null;
  /** The harness's explicit plan field; plans are never inferred from prose. */
  planText?: string | null;
  /** Any value other than undefined/null means the prompt failed; those are not classified here. */
  promptError?: unknown;
  /** The turn has not completed yet. */
  inFlight?: boolean;
  /** The agent chose not to reply. */
  silentReply?: boolean;
};

/** The text an agent replies with to stay silent on purpose. */
export const SILENT_REPLY_TOKEN = "NO_REPLY";

/**
 * Classifies a completed turn that produced no visible assistant text so the fallback policy can
 * decide whether to retry elsewhere. Returns null for visible text, prompt errors, in-flight turns
 * and intentional silent replies. `planning-only` requires a non-empty explicit `planText` and
 * wins over reasoning; `reasoning-only` needs non-empty reasoning; anything else is `empty`.
 */
export function classifyTerminalOutcome(input: TTerminalOutcomeInput): TTerminalOutcome | null {
  if (input.promptError !== undefined && input.promptError !== null) return null;
  if (input.inFlight === true) return null;
  const visible = input.visibleText.trim();
  if (input.silentReply === true || visible === SILENT_REPLY_TOKEN) return null;
  if (visible !== "") return null;
  if (hasText(input.planText)) return "planning-only";
  if (hasText(input.reasoningText)) return "reasoning-only";
  return "empty";
}

const hasText = (value: string | null | undefined): boolean => typeof value === "string" && value.trim() !== "";
