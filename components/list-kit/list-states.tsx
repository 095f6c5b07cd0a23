import { useTranslations } from "next-intl";
import type { ReactNode } from "react";
import { useErrorSentence } from "../use-error-sentence";

/** Grey placeholder lines in the shape of the rows to come (announced once as loading). */
export function ListSkeleton({ rows = 5, columns = 4, label }: { rows?: number; columns?: number; label?: string }) {
  const t = useTranslations("list");
  return (
    <div className="skeleton" role="status" aria-label={label ?? t("loading")} aria-busy="true" data-testid="list-skeleton">
      {Array.from({ length: rows }, (_, r) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: placeholders have no identity
        <div key={r} className="skeleton-row">
          {Array.from({ length: columns }, (_, c) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: placeholders have no identity
            <span key={c} className="skeleton-cell" />
          ))}
        </div>
      ))}
    </div>
  );
}

/** What an empty list says: what would be here, and (when filtered) that the filters hide it. */
export function EmptyState({ children, testId = "list-empty" }: { children: ReactNode; testId?: string }) {
  return (
    <div className="empty" data-testid={testId}>
      {children}
    </div>
  );
}

/** A list that could not be loaded, as a sentence (never raw JSON). */
export function ErrorState({ error }: { error: unknown }) {
  const errorSentence = useErrorSentence();
  return (
    <p role="alert" className="error-box" data-testid="list-error">
      {errorSentence(error, "load")}
    </p>
  );
}

type TQueryLike = { error: unknown; isPending: boolean };

/**
 * The one way a list shows its query: the error sentence, a skeleton while the first page loads,
 * the empty state, or the rows.
 */
export function ListStates({ query, empty, isEmpty, skeleton, children }: { query: TQueryLike; empty: ReactNode; isEmpty: boolean; skeleton?: { rows?: number; columns?: number }; children: ReactNode }) {
  if (query.error) return <ErrorState error={query.error} />;
  if (query.isPending) return <ListSkeleton {...skeleton} />;
  if (isEmpty) return <EmptyState>{empty}</EmptyState>;
  return <>{children}</>;
}
