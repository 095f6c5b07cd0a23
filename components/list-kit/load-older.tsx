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
