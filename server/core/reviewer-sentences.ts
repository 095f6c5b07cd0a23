/**
 * The sentences the server itself writes as a reviewer's rationale (the rule reviewer, the chain).
 * They are stored as text with the approval (and told to the agent); the console gets them as a
 * code too, so it can word them in the viewer's language. A model reviewer's rationale is its own
 * words and has no code: it is shown as written.
 */
export const REVIEWER_SENTENCES = {
  rulesUnsure: "The rules recognise this command as neither clearly read-only nor clearly dangerous.",
  readsOnly: "The command only reads files in the working directory.",
  noReviewer: "No reviewer is configured.",
} as const;

/** Sentences that end with a detail of their own (an error message, the reviewer's words). */
const REVIEWER_PREFIXES = {
  reviewerFailed: "The reviewer failed: ",
} as const;

export type TReviewerSentence = keyof typeof REVIEWER_SENTENCES | keyof typeof REVIEWER_PREFIXES;

/** "The reviewer failed: <message>". */
export const reviewerFailed = (message: string): string => `${REVIEWER_PREFIXES.reviewerFailed}${message}`;

/** The code of a rationale the server wrote, with its detail; null for anything else (a model's words). */
export function reviewerSentenceCode(rationale: string | null | undefined): { code: TReviewerSentence; detail: string | null } | null {
  if (!rationale) return null;
  for (const [code, text] of Object.entries(REVIEWER_SENTENCES)) if (rationale === text) return { code: code as TReviewerSentence, detail: null };
  for (const [code, prefix] of Object.entries(REVIEWER_PREFIXES)) {
    if (rationale.startsWith(prefix)) return { code: code as TReviewerSentence, detail: rationale.slice(prefix.length) };
  }
  return null;
}
