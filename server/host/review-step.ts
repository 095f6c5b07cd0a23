import { reviewRequestFor, reviewWithFallback, type TExecReviewer, type TReviewRequest, type TReviewVerdict } from "../reviewer";

/** What a review needs of an attempt: its reviewer, workspace, cancellation and recorded steps. */
export type TReviewingAttempt = {
  readonly deps: { readonly reviewer: TExecReviewer | null };
  readonly workspaceDir: string;
  readonly signal: AbortSignal;
  step: <T>(key: string, fn: (record: { frame: (type: string, data: Record<string, unknown>) => void }) => Promise<T>) => Promise<T>;
};

/**
 * Asks the configured exec reviewer as step `key` of the attempt (a re-run attempt reads the
 * recorded verdict instead of asking again) and records the verdict as a `review.verdict` frame of
 * `callId`. Used for the host's own tool calls and for a harness's `reviewExec`.
 */
export function recordedReview(attempt: TReviewingAttempt, key: string, callId: string, request: Omit<TReviewRequest, "command" | "workspace">): Promise<TReviewVerdict> {
  return attempt.step(key, async (record) => {
    const verdict = await reviewWithFallback(attempt.deps.reviewer, reviewRequestFor({ ...request, workspace: attempt.workspaceDir }), attempt.signal);
    record.frame("review.verdict", { callId, toolName: request.toolName, ...verdict });
    return verdict;
  });
}
