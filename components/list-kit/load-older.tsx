import { useTranslations } from "next-intl";

type TPages = { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };

/**
 * The footer of a cursor-paginated list: how many rows are shown, and the button that loads the
 * next (older) page while the server says there is one.
 */
export function LoadOlder({ pages, shown, label: given, testId = "load-more" }: { pages: TPages; shown?: number; label?: string; testId?: string }) {
  const t = useTranslations("list");
  const label = given ?? t("loadOlder");
  if (!pages.hasNextPage && shown === undefined) return null;
  return (
    <p className="list-foot">
      {shown !== undefined ? (
        <span className="muted small" data-testid="shown-count">
          {t("shown", { n: shown })}
        </span>
      ) : (
        <span />
      )}
      {pages.hasNextPage ? (
        <button type="button" className="btn btn-quiet" onClick={() => void pages.fetchNextPage()} disabled={pages.isFetchingNextPage} aria-busy={pages.isFetchingNextPage} data-testid={testId}>
          {pages.isFetchingNextPage ? `${label}…` : label}
        </button>
      ) : null}
    </p>
  );
}

/** Rows per page of the console's cursor-paginated lists. */
export const PAGE_SIZE = 50;

/** Every row loaded so far of an infinite query over keyset pages (`{rows, nextCursor}`). */
export const loadedRows = <T,>(query: { data?: { pages: Array<{ rows: T[] }> } }): T[] => query.data?.pages.flatMap((p) => p.rows) ?? [];

/** Infinite-query options of a keyset list: the next page starts at the last page's cursor. */
export const keysetPages = { getNextPageParam: (last: { nextCursor: string | null }) => last.nextCursor ?? undefined } as const;
