"use client";

import { useLocale, useTranslations } from "next-intl";
import { useMemo } from "react";
import { Bar, BarChart, CartesianGrid, Cell, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { DECISION_OUTCOMES, type TDecisionOutcome } from "../../server/core/vocabulary";
import type { TDecisionOutcomesView } from "../api-types";
import { useVocab } from "../list-kit/labels";
import { ChartTable } from "./chart-table";
import { OUTCOME_COLOUR, OutcomeSwatch } from "./outcomes";
import { QueryLink, type TAnalyticsNav, type TAnalyticsParams } from "./query-state";

const TICK = { fontSize: 12, fill: "var(--muted)" };
const TOOLTIP_STYLE = { background: "var(--surface)", border: "1px solid var(--border)" };

/**
 * Requests per day, stacked by outcome, one fixed colour each. A bar's segment selects its day and
 * outcome, the rest of a day's column the day: the requests behind it are listed under the page.
 * The table below the chart holds the same figures as links.
 */
export function PerDayChart({ data, nav, timeZone, onSelect }: { data: TDecisionOutcomesView; nav: TAnalyticsNav; timeZone: string; onSelect: () => void }) {
  const t = useTranslations("analytics");
  const vocab = useVocab();
  const locale = useLocale();
  const fmt = (n: number) => n.toLocaleString(locale);
  const { params, go } = nav;
  const present = DECISION_OUTCOMES.filter((o) => data.totals[o] > 0);
  const rows = useMemo(() => data.perDay.map((d) => ({ day: d.day, ...d.counts })), [data.perDay]);
  const select = (change: Partial<TAnalyticsParams>) => {
    go(change);
    onSelect();
  };
  return (
    <section className="card chart-card" aria-labelledby="analytics-per-day-title" data-testid="chart-per-day">
      <h2 id="analytics-per-day-title">{t("perDay")}</h2>
      <p className="muted small">{t("perDayHint")}</p>
      <div className="chart">
        <ResponsiveContainer width="100%" height={280}>
          <BarChart
            data={rows}
            margin={{ top: 8, right: 8, bottom: 0, left: 0 }}
            onClick={(state) => {
              if (typeof state.activeLabel === "string") select({ day: state.activeLabel });
            }}
          >
            <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="var(--border)" />
            <XAxis dataKey="day" tick={TICK} tickFormatter={(d: string) => d.slice(5)} minTickGap={12} />
            <YAxis tick={TICK} allowDecimals={false} tickFormatter={(n: number) => fmt(n)} width={48} />
            <Tooltip cursor={{ fill: "var(--surface-2)" }} formatter={(v) => fmt(Number(v))} contentStyle={TOOLTIP_STYLE} />
            <Legend formatter={(value) => <span className="chart-legend-text">{value}</span>} />
            {present.map((o) => (
              <Bar
                key={o}
                dataKey={o}
                name={vocab.outcome(o)}
                stackId="outcomes"
                fill={OUTCOME_COLOUR[o]}
                cursor="pointer"
                isAnimationActive={false}
                onClick={(bar, _index, event) => {
                  // The segment's own selection; the chart's click (the day alone) must not follow it.
                  event.stopPropagation();
                  const day = (bar.payload as { day?: unknown } | undefined)?.day;
                  if (typeof day === "string") select({ day, outcome: o });
                }}
              >
                {rows.map((r) => (
                  <Cell key={r.day} data-day={r.day} data-outcome={o} fillOpacity={params.day !== "" && params.day !== r.day ? 0.35 : 1} />
                ))}
              </Bar>
            ))}
          </BarChart>
        </ResponsiveContainer>
      </div>
      <ChartTable testId="per-day-table-toggle">
        <PerDayTable data={data} present={present} nav={nav} timeZone={timeZone} onSelect={onSelect} />
      </ChartTable>
    </section>
  );
}

/** The days with requests, newest first: each day and each non-zero count is a link to its requests. */
function PerDayTable({ data, present, nav, timeZone, onSelect }: { data: TDecisionOutcomesView; present: TDecisionOutcome[]; nav: TAnalyticsNav; timeZone: string; onSelect: () => void }) {
  const t = useTranslations("analytics");
  const vocab = useVocab();
  const locale = useLocale();
  const fmt = (n: number) => n.toLocaleString(locale);
  const days = data.perDay
    .map((d) => ({ ...d, total: DECISION_OUTCOMES.reduce((n, o) => n + (d.counts[o] ?? 0), 0) }))
    .filter((d) => d.total > 0)
    .reverse();
  return (
    <div className="table-wrap">
      <table className="table" data-testid="per-day-table">
        <caption className="visually-hidden">{t("perDay")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("colDay", { zone: timeZone })}</th>
            <th scope="col" className="num">
              {t("colTotal")}
            </th>
            {present.map((o) => (
              <th key={o} scope="col" className="num">
                <OutcomeSwatch outcome={o} /> {vocab.outcome(o)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {days.map((d) => (
            <tr key={d.day} data-testid="per-day-row" data-day={d.day} aria-current={nav.params.day === d.day ? "true" : undefined}>
              <td className="nowrap">
                <QueryLink href={nav.href({ day: d.day })} onFollow={onSelect} aria-label={t("dayLink", { day: d.day })}>
                  {d.day}
                </QueryLink>
              </td>
              <td className="num">{fmt(d.total)}</td>
              {present.map((o) => {
                const n = d.counts[o] ?? 0;
                return (
                  <td key={o} className="num">
                    {n > 0 ? (
                      <QueryLink href={nav.href({ day: d.day, outcome: o })} onFollow={onSelect} aria-label={t("dayOutcomeLink", { day: d.day, outcome: vocab.outcome(o) })}>
                        {fmt(n)}
                      </QueryLink>
                    ) : (
                      <span className="muted">0</span>
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
