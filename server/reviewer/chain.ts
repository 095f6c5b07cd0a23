import { REVIEWER_SENTENCES, reviewerFailed } from "../core/reviewer-sentences";
import { type TExecReviewer, type TReviewRequest, type TReviewVerdict, ZReviewVerdict } from "./types";
import { askForInvalidVerdict, askVerdict, clip, elapsedSince } from "./verdicts";

/** Options of a reviewer chain. */
export type TReviewerChainOptions = {
  /** The chain's name; default the stage names joined with `+`. Verdicts name the stage that decided. */
  name?: string;
  /**
   * Whether an `allow-once` from a reviewer before the last one (typically the rule reviewer) is
   * final. When false it falls through to the next reviewer, which must allow it as well. Default true.
   */
  trustRuleAllows?: boolean;
};

type TStageOutcome = { verdict: TReviewVerdict; failed: boolean };

async function runStage(reviewer: TExecReviewer, request: TReviewRequest, signal?: AbortSignal): Promise<TStageOutcome> {
  const startedAt = performance.now();
  try {
    const value: unknown = await reviewer.review(request, signal);
    const parsed = ZReviewVerdict.safeParse(value);
    if (parsed.success) return { verdict: parsed.data, failed: false };
    return { verdict: askForInvalidVerdict(value, reviewer.name, elapsedSince(startedAt)), failed: true };
  } catch (error) {
    const message = clip(error instanceof Error ? error.message : String(error), 300);
    const verdict = askVerdict({ reviewer: reviewer.name, risk: null, rationale: reviewerFailed(message), latencyMs: elapsedSince(startedAt) });
    return { verdict, failed: true };
  }
}

/**
 * Runs reviewers in order, typically `[createRuleReviewer(), createModelReviewer(…)]`:
 * - a `deny` from any stage is final;
 * - an `allow-once` is final if `trustRuleAllows` (default) or if it comes from the last stage;
 * - an `ask` falls through to the next stage; the last stage's verdict is returned as is.
 * A stage that throws or returns a malformed verdict stops the chain with `ask`, because a
 * failed rule stage means its deterministic checks did not run. The returned verdict names the
 * stage that decided and carries the latency of the whole chain.
 */
export function createReviewerChain(reviewers: readonly TExecReviewer[], options: TReviewerChainOptions = {}): TExecReviewer {
  const name = options.name ?? (reviewers.map((r) => r.name).join("+") || "empty-chain");
  const trustEarlyAllows = options.trustRuleAllows ?? true;
  return {
    name,
    review: async (request, signal) => {
      const startedAt = performance.now();
      let verdict = askVerdict({ reviewer: name, risk: null, rationale: REVIEWER_SENTENCES.noReviewer, latencyMs: 0 });
      for (const [index, reviewer] of reviewers.entries()) {
        const outcome = await runStage(reviewer, request, signal);
        verdict = outcome.verdict;
        if (outcome.failed || verdict.decision === "deny" || index === reviewers.length - 1) break;
        if (verdict.decision === "allow-once" && trustEarlyAllows) break;
      }
      return { ...verdict, latencyMs: elapsedSince(startedAt) };
    },
  };
}

/**
 * The host's entry point: reviews with `reviewer`, or returns `ask` when there is none. A thrown
 * error or a malformed verdict is `ask` ("The reviewer failed: …"), never permission to execute.
 */
export async function reviewWithFallback(reviewer: TExecReviewer | null, request: TReviewRequest, signal?: AbortSignal): Promise<TReviewVerdict> {
  if (!reviewer) return askVerdict({ reviewer: "none", risk: null, rationale: REVIEWER_SENTENCES.noReviewer, latencyMs: 0 });
  return (await runStage(reviewer, request, signal)).verdict;
}

/**
 * The review request for one tool call: the shell command when the arguments carry one (`exec`),
 * otherwise the arguments as JSON, so every tool is reviewed the same way.
 */
export function reviewRequestFor(call: Omit<TReviewRequest, "command">): TReviewRequest {
  const args = call.arguments as { command?: unknown } | null;
  const command = typeof args?.command === "string" ? args.command : JSON.stringify(call.arguments);
  return { ...call, command };
}
