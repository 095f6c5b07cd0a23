"use client";

import { useLocale, useTranslations } from "next-intl";
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { TDecisionTimesView, TOutputs } from "../api-types";
import { EmptyState } from "../list-kit/list-states";
import { useHumanDuration } from "../time-labels";
import { ChartSection, type TChartQuery } from "./chart-state";
import { ChartTable } from "./chart-table";
import { QueryLink, type TAnalyticsNav, type TAnalyticsParams } from "./query-state";

type TTimes = TDecisionTimesView;
type TTimesRow = TTimes["byAgent"][number];

const TICK = { fontSize: 12, fill: "var(--muted)" };

/** "≤10 s", "≤1 min", "≤4 h", "≤1 day", "> 1 day": a histogram bucket by its upper bound (null: over the one before). */
export function useBucketLabel() {
  const t = useTranslations("analytics");
  const span = (s: number) =>
    s % 86_400 === 0 ? t("spanDays", { n: s / 86_400 }) : s % 3600 === 0 ? t("spanHours", { n: s / 3600 }) : s % 60 === 0 ? t("spanMinutes", { n: s / 60 }) : t("spanSeconds", { n: s });
  return (upTo: number | null, before: number | null | undefined) => (upTo !== null ? t("upTo", { span: span(upTo) }) : t("over", { span: span(before ?? 0) }));
}

/**
 * How long people took to decide (`analytics.times`): a histogram, and the median and 90th
 * percentile per approver, agent and action. A name filters the page on it (the figures and the
 * requests listed).
 */
export function DecisionTimes({ query, nav, member, onSelect }: { query: TChartQuery<TOutputs["analytics"]["times"]>; nav: TAnalyticsNav; member: boolean; onSelect: () => void }) {
  const t = useTranslations("analytics");
  return (
    <ChartSection name="times" title={t("timeToDecide")} hint={t("timeToDecideHint")} query={query} skeleton={{ rows: 5, columns: 3 }}>
      {(data) => <TimesFigures times={data.decisionTimes} nav={nav} member={member} onSelect={onSelect} />}
    </ChartSection>
  );
}

function TimesFigures({ times, nav, member, onSelect }: { times: TTimes; nav: TAnalyticsNav; member: boolean; onSelect: () => void }) {
  const t = useTranslations("analytics");
  const locale = useLocale();
  const fmt = (n: number) => n.toLocaleString(locale);
  const label = useBucketLabel();
  const buckets = times.histogram.map((b, i) => ({ label: label(b.upToSeconds, times.histogram[i - 1]?.upToSeconds), count: b.count }));
  const decided = buckets.reduce((n, b) => n + b.count, 0);
  return (
    <>
      {decided === 0 ? (
        <EmptyState testId="times-empty">{t("noTimes")}</EmptyState>
      ) : (
        <div className="analytics-times">
          <div className="card chart-card analytics-histogram" data-testid="chart-histogram">
            <h3>{t("histogram")}</h3>
            <ResponsiveContainer width="100%" height={220}>
              <BarChart data={buckets} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
                <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="var(--border)" />
                <XAxis dataKey="label" tick={TICK} minTickGap={4} />
                <YAxis tick={TICK} allowDecimals={false} tickFormatter={(n: number) => fmt(n)} width={48} />
                <Tooltip cursor={{ fill: "var(--surface-2)" }} formatter={(v) => fmt(Number(v))} contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)" }} />
                <Bar
                  dataKey="count"
                  name={t("decisions")}
                  fill="var(--accent)"
                  isAnimationActive={false}
                  cursor="pointer"
                  onClick={(_, index) => {
                    nav.go({ waited: String(index) });
                    onSelect();
                  }}
                />
              </BarChart>
            </ResponsiveContainer>
            <ChartTable testId="histogram-table-toggle">
              <table className="table" data-testid="histogram-table">
                <caption className="visually-hidden">{t("histogram")}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t("colBucket")}</th>
                    <th scope="col" className="num">
                      {t("decisions")}
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {buckets.map((b, i) => (
                    <tr key={b.label} aria-current={nav.params.waited === String(i) ? "true" : undefined}>
                      <td>{b.label}</td>
                      <td className="num">
                        {b.count > 0 ? (
                          <QueryLink href={nav.href({ waited: String(i) })} onFollow={onSelect} data-testid="histogram-link">
                            {fmt(b.count)}
                          </QueryLink>
                        ) : (
                          fmt(b.count)
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ChartTable>
          </div>
          <PercentileTable title={t("byApprover")} column={t("approver")} rows={times.byApprover} nav={nav} filter={member ? null : "approver"} testId="times-approver" />
          <PercentileTable title={t("byAgent")} column={t("agent")} rows={times.byAgent} nav={nav} filter="agent" testId="times-agent" />
          <PercentileTable title={t("byAction")} column={t("action")} rows={times.byAction} nav={nav} filter="action" testId="times-action" />
        </div>
      )}
    </>
  );
}

/**
 * p50 and p90 per key, with a bar of each against the table's longest p90. The name links to the
 * page filtered on it (again: the filter cleared); `filter` null: the name is text (a member
 * filters by no approver).
 */
function PercentileTable({
  title,
  column,
  rows,
  nav,
  filter,
  testId,
}: {
  title: string;
  column: string;
  rows: TTimesRow[];
  nav: TAnalyticsNav;
  filter: keyof Pick<TAnalyticsParams, "approver" | "agent" | "action"> | null;
  testId: string;
}) {
  const t = useTranslations("analytics");
  const duration = useHumanDuration();
  const longest = Math.max(1, ...rows.map((r) => r.p90Ms));
  const width = (ms: number) => `${Math.max(2, (ms / longest) * 100)}%`;
  return (
    <div className="card analytics-pct" data-testid={testId}>
      <h3>{title}</h3>
      <div className="table-wrap analytics-pct-wrap">
        <table className="table">
          <thead>
            <tr>
              <th scope="col">{column}</th>
              <th scope="col" className="num">
                {t("colP50")}
              </th>
              <th scope="col" className="num">
                {t("colP90")}
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const name = r.name ?? r.key;
              const on = filter !== null && nav.params[filter] === r.key;
              return (
                <tr key={r.key} data-testid="times-row" data-key={r.key}>
                  <td className="analytics-pct-name">
                    {filter ? (
                      <QueryLink href={nav.href({ [filter]: on ? "" : r.key })} aria-current={on ? "true" : undefined} title={t("filterOn", { name })}>
                        {name}
                      </QueryLink>
                    ) : (
                      name
                    )}
                    <span className="muted small"> · {t("decisionsCount", { n: r.count })}</span>
                    <span className="analytics-range" aria-hidden="true">
                      <span className="analytics-range-p90" style={{ width: width(r.p90Ms) }} />
                      <span className="analytics-range-p50" style={{ width: width(r.p50Ms) }} />
                    </span>
                  </td>
                  <td className="num nowrap">{duration(r.p50Ms)}</td>
                  <td className="num nowrap">{duration(r.p90Ms)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </div>
  );
}
