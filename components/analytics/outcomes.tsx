"use client";

import type { TDecisionOutcome } from "../../server/core/vocabulary";
import { useVocab } from "../list-kit/labels";

/** One fixed colour per outcome, in every chart and legend (the text beside it names the outcome). */
export const OUTCOME_COLOUR: Record<TDecisionOutcome, string> = {
  approved: "#1f9d6b",
  edited: "#0891b2",
  denied: "#dc2626",
  replied: "#7c3aed",
  expired: "#d97706",
  cancelled: "#8b93a1",
  policy: "#3b4fd8",
  grant: "#be185d",
  reviewer: "#4d7c0f",
};

/** An outcome's badge tone class, spelled out whole (scripts/css-selectors.test.ts finds each class in the source). */
const OUTCOME_TONE: Record<TDecisionOutcome, string> = {
  approved: "tone-ok",
  edited: "tone-ok",
  denied: "tone-bad",
  replied: "tone-info",
  expired: "tone-warn",
  cancelled: "tone-muted",
  policy: "tone-info",
  grant: "tone-info",
  reviewer: "tone-info",
};

/** The outcome's colour as a small square (beside its name, never instead of it). */
export function OutcomeSwatch({ outcome }: { outcome: TDecisionOutcome }) {
  return <span className="analytics-swatch" style={{ background: OUTCOME_COLOUR[outcome] }} aria-hidden="true" />;
}

/** How a request was settled, as a badge; `data-outcome` carries the code. */
export function OutcomeBadge({ outcome }: { outcome: TDecisionOutcome }) {
  const vocab = useVocab();
  return (
    <span className={`badge ${OUTCOME_TONE[outcome]}`} data-testid="outcome" data-outcome={outcome}>
      {vocab.outcome(outcome)}
    </span>
  );
}
