import type { TRisk } from "../core/vocabulary";
import type { TReviewVerdict } from "./types";

/**
 * What the agent is told after a `deny`, beside the rationale. A deny is final: it is never
 * turned into a human approval request.
 */
export const DENY_GUIDANCE =
  "Do not pursue the same outcome through workarounds, indirect execution (scripts, aliases, encoded, split or " +
  "rewritten commands, other tools) or policy circumvention. You may choose a materially safer alternative, or " +
  "explain the risk to the user and ask them to approve this exact command separately.";

const MAX_RATIONALE = 2000;

type TVerdictFields = { reviewer: string; rationale: string; latencyMs: number };

/** Shortens text to `max` characters, marking the cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Milliseconds since `startedAt` (a `performance.now()` reading), rounded. */
export function elapsedSince(startedAt: number): number {
  return Math.max(0, Math.round(performance.now() - startedAt));
}

/** An `allow-once` verdict; only low or medium risk can be allowed. */
export function allowOnceVerdict(fields: TVerdictFields & { risk: "low" | "medium" }): TReviewVerdict {
  return { decision: "allow-once", ...fields, rationale: clip(fields.rationale, MAX_RATIONALE) };
}

/** A `deny` verdict carrying `DENY_GUIDANCE`. */
export function denyVerdict(fields: TVerdictFields & { risk: TRisk }): TReviewVerdict {
  return { decision: "deny", ...fields, rationale: clip(fields.rationale, MAX_RATIONALE), guidance: DENY_GUIDANCE };
}

/** An `ask` verdict: a person decides. `risk` is null when the reviewer could not assess it. */
export function askVerdict(fields: TVerdictFields & { risk: TRisk | null }): TReviewVerdict {
  return { decision: "ask", ...fields, rationale: clip(fields.rationale, MAX_RATIONALE) };
}

/**
 * The `ask` that replaces a malformed verdict from any reviewer (including third-party ones),
 * such as an allow with a risk other than low or medium.
 */
export function askForInvalidVerdict(value: unknown, reviewer: string, latencyMs: number): TReviewVerdict {
  const candidate = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  const risk = candidate.risk === "low" || candidate.risk === "medium" || candidate.risk === "high" ? candidate.risk : null;
  const said = typeof candidate.rationale === "string" ? `: ${candidate.rationale}` : ".";
  const rationale =
    candidate.decision === "allow-once" && risk === "high"
      ? `The reviewer allowed the command at high risk, which needs a person${said}`
      : `The reviewer returned an invalid verdict${said}`;
  return askVerdict({ reviewer, risk, rationale, latencyMs });
}
