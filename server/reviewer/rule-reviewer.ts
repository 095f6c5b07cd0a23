import { REVIEWER_SENTENCES } from "../core/reviewer-sentences";
import { findReviewerInjection } from "./injection";
import { isClearlyReadOnly } from "./read-only";
import { scopeOf } from "./rule-paths";
import { findDanger } from "./rule-patterns";
import type { TExecReviewer, TReviewRequest, TReviewVerdict } from "./types";
import { allowOnceVerdict, askVerdict, denyVerdict, elapsedSince } from "./verdicts";

/** Options of the deterministic rule reviewer. */
export type TRuleReviewerOptions = {
  /** Recorded as the verdict's `reviewer`; default `rules`. */
  name?: string;
  /**
   * The host's workspaces directory (`<data dir>/workspaces`). Read-only commands are allowed only
   * if their working directory lies inside it; the session workspace a command may change is
   * `<root>/<session>`, and the rest of the data directory counts as a credential store. Without
   * it, the working directory itself is the boundary.
   */
  workspaceRoot?: string;
};

function reviewByRules(request: TReviewRequest, name: string, options: TRuleReviewerOptions): TReviewVerdict {
  const verdict = { reviewer: name, latencyMs: 0 };
  const injection = findReviewerInjection(request);
  if (injection) {
    return denyVerdict({
      ...verdict,
      risk: "high",
      rationale: `Reviewer-directed prompt injection in the ${injection.field}: ${injection.evidence}.`,
    });
  }
  const scope = scopeOf(request, options.workspaceRoot);
  const danger = findDanger(request.command, scope);
  if (danger) {
    const category = danger.category[0]?.toUpperCase() + danger.category.slice(1);
    return denyVerdict({ ...verdict, risk: "high", rationale: `${category}: ${danger.rationale}` });
  }
  // With a workspaces root, reads are allowed only from inside a session workspace.
  const readsInside = options.workspaceRoot === undefined || (scope.workspace !== null && scope.cwd !== null);
  if (isClearlyReadOnly(request.command) && readsInside) {
    return allowOnceVerdict({ ...verdict, risk: "low", rationale: REVIEWER_SENTENCES.readsOnly });
  }
  return askVerdict({
    ...verdict,
    risk: null,
    rationale: REVIEWER_SENTENCES.rulesUnsure,
  });
}

/**
 * The deterministic reviewer: reviewer-directed injection, destructive commands, deleting or
 * changing anything outside the session workspace, uploads of local files, reads of credential
 * stores, exfiltration and privilege escalation are denied with high risk; plain reads of the
 * working directory are allowed once with low risk; everything else is `ask`, so it never allows
 * what it does not understand.
 */
export function createRuleReviewer(options: TRuleReviewerOptions = {}): TExecReviewer {
  const name = options.name ?? "rules";
  return {
    name,
    review: async (request) => {
      const startedAt = performance.now();
      const verdict = reviewByRules(request, name, options);
      return { ...verdict, latencyMs: elapsedSince(startedAt) };
    },
  };
}
