import { z } from "zod";
import { RISKS } from "../core/vocabulary";

/** The three outcomes of an exec review; the host must handle each one explicitly. */
export const REVIEW_DECISIONS = ["allow-once", "deny", "ask"] as const;
export type TReviewDecision = (typeof REVIEW_DECISIONS)[number];

/** The only risks with which `allow-once` is valid; any other allow becomes `ask`. */
export const ALLOWABLE_RISKS = ["low", "medium"] as const;

/** One risky tool call, as the reviewer sees it. Every field is untrusted data, never instructions. */
export type TReviewRequest = {
  /** The exact shell command that would run. */
  command: string;
  /** The working directory (relative to the workspace, or absolute), or null when irrelevant. */
  cwd: string | null;
  /**
   * The session workspace's absolute path: the only place the command may change. The rule
   * reviewer denies changes outside it (and, without it, outside the working directory).
   */
  workspace?: string;
  /** The agent that asked for the command. */
  agent: string;
  /** The tool name, normally `exec`. */
  toolName: string;
  /** The tool call's raw arguments. */
  arguments: unknown;
  /** For an action a caller runs itself (an external approval): its name, e.g. `send_email` or `coding:Write`. */
  action?: string;
  /** What the action does, as the agent's configuration describes it. */
  description?: string;
  /** Recent conversation text, already bounded by the caller; reviewers bound it again. */
  context?: string;
};

const reviewedBy = {
  rationale: z.string().min(1).max(2000),
  /** Name of the reviewer that decided, e.g. `rules` or `model:gpt-4.1-mini`. */
  reviewer: z.string().min(1).max(200),
  /** Wall time the review took, in milliseconds. */
  latencyMs: z.number().nonnegative(),
};

/**
 * A reviewer's verdict, as recorded in the trajectory.
 * - `allow-once`: run the reviewed command once (the host still applies its own checks).
 * - `deny`: do not run it; return `rationale` and `guidance` to the agent; never escalate to a person.
 * - `ask`: route the request to human approval, showing `rationale`.
 */
export const ZReviewVerdict = z.discriminatedUnion("decision", [
  z.strictObject({ decision: z.literal("allow-once"), risk: z.enum(ALLOWABLE_RISKS), ...reviewedBy }),
  z.strictObject({ decision: z.literal("deny"), risk: z.enum(RISKS), guidance: z.string().min(1), ...reviewedBy }),
  z.strictObject({ decision: z.literal("ask"), risk: z.enum(RISKS).nullable(), ...reviewedBy }),
]);
export type TReviewVerdict = z.infer<typeof ZReviewVerdict>;

/** Decides on one exec request. Implementations should not throw; callers still guard with `reviewWithFallback`. */
export type TExecReviewer = {
  name: string;
  review: (request: TReviewRequest, signal?: AbortSignal) => Promise<TReviewVerdict>;
};
