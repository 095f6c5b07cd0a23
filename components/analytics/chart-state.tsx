"use client";

import type { ReactNode } from "react";
import { ErrorState, ListSkeleton } from "../list-kit/list-states";

/** What a chart needs of its query (`useQuery` with the previous answer kept as a placeholder). */
export type TChartQuery<T> = { data: T | undefined; error: unknown; isPlaceholderData: boolean };

/**
 * One chart's own state, whatever the others': its error sentence, a skeleton until its first
 * answer, then the chart (dimmed and marked busy while the answer to a new filter is on its way).
 */
export function ChartState<T>({ query, skeleton, testId, children }: { query: TChartQuery<T>; skeleton: { rows: number; columns: number }; testId?: string; children: (data: T) => ReactNode }) {
  if (query.error) return <ErrorState error={query.error} />;
  if (query.data === undefined) return <ListSkeleton {...skeleton} />;
  return (
    <div className="analytics-chart-body" aria-busy={query.isPlaceholderData} data-testid={testId}>
      {children(query.data)}
    </div>
  );
}
