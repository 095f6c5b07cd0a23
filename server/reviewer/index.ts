/**
 * The exec reviewer: decides on an `exec` tool call before a person sees it.
 *
 * ```ts
 * const reviewer = createConfiguredReviewer(reviewerConfigFromEnv(env)); // or createReviewerChain([...])
 * const verdict = await reviewWithFallback(reviewer, request, signal);
 * // allow-once → run once; deny → return rationale + guidance to the agent; ask → human approval
 * ```
 */
export { createReviewerChain, reviewRequestFor, reviewWithFallback, type TReviewerChainOptions } from "./chain";
export { createConfiguredReviewer, REVIEWER_MODES, reviewerConfigFromEnv, type TReviewerConfig, ZReviewerConfig } from "./config";
export { detectReviewerInjection, findReviewerInjection, type TInjectionFinding, type TInjectionSource, type TRequestInjection } from "./injection";
export { createModelReviewer, type TModelReviewerOptions, type TResponseFormat } from "./model-reviewer";
export { createRuleReviewer, type TRuleReviewerOptions } from "./rule-reviewer";
export {
  ALLOWABLE_RISKS,
  REVIEW_DECISIONS,
  type TExecReviewer,
  type TReviewDecision,
  type TReviewRequest,
  type TReviewVerdict,
  ZReviewVerdict,
} from "./types";
export { DENY_GUIDANCE } from "./verdicts";
