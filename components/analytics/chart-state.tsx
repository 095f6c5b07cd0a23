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

/** A chart's section: its heading and hint, then {@link ChartState} (the page's charts share this frame). */
export function ChartSection<T>({
  name,
  title,
  hint,
  query,
  skeleton,
  children,
}: {
  /** Names the section's test id (`analytics-<name>`) and heading id. */
  name: string;
  title: string;
  hint: string;
  query: TChartQuery<T>;
  skeleton: { rows: number; columns: number };
  children: (data: T) => ReactNode;
}) {
  return (
    <section className="section" aria-labelledby={`analytics-${name}-title`} data-testid={`analytics-${name}`}>
      <h2 id={`analytics-${name}-title`}>{title}</h2>
      <p className="muted small">{hint}</p>
      <ChartState query={query} skeleton={skeleton}>
        {children}
      </ChartState>
    </section>
  );
}
