"use client";

import { useQuery } from "@tanstack/react-query";
import { useLocale, useTranslations } from "next-intl";
import { useEffect, useMemo, useRef, useState } from "react";
import { DECISION_OUTCOMES } from "../server/core/vocabulary";
import { ChartState } from "./analytics/chart-state";
import { DecisionTimes } from "./analytics/decision-times";
import { OutcomeSwatch } from "./analytics/outcomes";
import { PerDayChart } from "./analytics/per-day";
import { MAX_PERIOD_DAYS, PERIODS, QueryLink, type TAnalyticsNav, useAnalyticsParams } from "./analytics/query-state";
import { ExpiredRequests, RepeatedRequests, RequestsSection } from "./analytics/request-lists";
import type { TDecisionOutcomesView, TDecisionTimesView, TExpiredRequestRow, TRepeatedRequestRow } from "./api-types";
import { useMe } from "./app-shell";
import { SelectFilter } from "./filters";
import { FilterBar } from "./list-kit/filter-bar";
import { useVocab } from "./list-kit/labels";
import { EmptyState } from "./list-kit/list-states";
import { PageHead } from "./list-kit/page-head";
import { personLabel } from "./person";
import { UNBATCHED, useTRPC } from "./trpc-provider";
import { periodEndingTonight, viewerZone } from "./viewer-time";

/**
 * Decision analytics: where approvers' attention goes, in the viewer's time zone. Each chart is a
 * query of its own (`analytics.outcomes`, `.times`, `.repeated`, `.expired`; each its own request,
 * so a slow chart holds none of the others), all over the same fixed period, each with its own
 * skeleton, error sentence and empty state. Every figure links to the requests behind it
 * (`analytics.requests`), listed at the foot of the page; the filters and the selection live in
 * the address (./analytics/query-state.tsx).
 */
export function AnalyticsPage() {
  const t = useTranslations("analytics");
  const trpc = useTRPC();
  const me = useMe();
  const member = me?.role === "member";
  const nav = useAnalyticsParams();
  const { params } = nav;
  const timeZone = useMemo(viewerZone, []);
  // Fixed per choice of period (a stable query key, the same for every chart); today is included whole.
  const range = useMemo(() => periodEndingTonight(Number(params.days), MAX_PERIOD_DAYS), [params.days]);
  const filter = useMemo(() => {
    const chosen = { agent: params.agent, action: params.action, approver: member ? "" : params.approver, outcome: params.outcome };
    return { ...range, timeZone, ...Object.fromEntries(Object.entries(chosen).filter(([, v]) => v !== "")) };
  }, [range, timeZone, params.agent, params.action, params.approver, params.outcome, member]);
  // The previous filter's figures stay (dimmed) until the new ones come.
  const outcomes = useQuery(trpc.analytics.outcomes.queryOptions(filter, { ...UNBATCHED, placeholderData: (prev) => prev }));
  const times = useQuery(trpc.analytics.times.queryOptions(filter, { ...UNBATCHED, placeholderData: (prev) => prev }));
  const repeated = useQuery(trpc.analytics.repeated.queryOptions(filter, { ...UNBATCHED, placeholderData: (prev) => prev }));
  const expired = useQuery(trpc.analytics.expired.queryOptions(filter, { ...UNBATCHED, placeholderData: (prev) => prev }));
  const figures = outcomes.data as TDecisionOutcomesView | undefined;
  // Nothing settled in the period: one empty state instead of every chart's own.
  const empty = figures?.totals.requests === 0;
  const filtered = params.agent !== "" || params.action !== "" || params.outcome !== "" || (!member && params.approver !== "");

  // Selecting a figure brings its requests into view (and the keyboard's focus to their heading).
  const requestsHeading = useRef<HTMLHeadingElement>(null);
  const showRequests = () =>
    requestAnimationFrame(() => {
      requestsHeading.current?.scrollIntoView({ block: "start" });
      requestsHeading.current?.focus({ preventScroll: true });
    });

  return (
    <>
      <PageHead
        title={t("title")}
        lede={t.rich("lead", { own: member ? "yes" : "no", zone: () => <span data-testid="analytics-zone">{timeZone}</span> })}
        below={
          figures && figures.perDay.length > 0 ? (
            <p className="muted small" data-testid="analytics-days">
              {t("periodDays", { first: figures.perDay[0]?.day ?? "", last: figures.perDay[figures.perDay.length - 1]?.day ?? "" })}
            </p>
          ) : null
        }
      />
      <Filters nav={nav} member={member} times={times.data?.decisionTimes} repeated={repeated.data?.repeated} expired={expired.data?.expired} />
      <div className="analytics-figures" data-testid="analytics-figures">
        <ChartState query={{ data: figures, error: outcomes.error, isPlaceholderData: outcomes.isPlaceholderData }} skeleton={{ rows: 6, columns: 5 }} testId="analytics-outcomes">
          {(data) => (
            <>
              <Totals totals={data.totals} nav={nav} />
              <ShadowLine shadow={data.shadow} />
              {data.totals.requests === 0 ? (
                <EmptyState testId="analytics-empty">
                  <strong>{t("empty")}</strong> {t("emptyHint", { filtered: filtered ? "yes" : "no" })}
                </EmptyState>
              ) : (
                <PerDayChart data={data} nav={nav} timeZone={timeZone} onSelect={showRequests} />
              )}
            </>
          )}
        </ChartState>
        {empty ? null : (
          <>
            <DecisionTimes query={times} nav={nav} member={member} onSelect={showRequests} />
            <RepeatedRequests query={repeated} nav={nav} onSelect={showRequests} />
            <ExpiredRequests query={expired} />
            <RequestsSection filter={filter} nav={nav} repeated={repeated.data?.repeated} histogram={times.data?.decisionTimes.histogram} headingRef={requestsHeading} />
          </>
        )}
      </div>
    </>
  );
}

/** Period, agent, action, approver (not for a member, who sees only its own requests) and outcome. */
function Filters({
  nav,
  member,
  times,
  repeated,
  expired,
}: {
  nav: TAnalyticsNav;
  member: boolean;
  times: TDecisionTimesView | undefined;
  repeated: TRepeatedRequestRow[] | undefined;
  expired: TExpiredRequestRow[] | undefined;
}) {
  const t = useTranslations("analytics");
  const vocab = useVocab();
  const trpc = useTRPC();
  const { params, go } = nav;
  const agents = useQuery(trpc.console.agents.queryOptions(undefined, { staleTime: 300_000 }));
  const people = useQuery(trpc.console.people.queryOptions(undefined, { enabled: !member, staleTime: 60_000 }));
  // The actions seen in the charts so far, each as it comes (a filtered answer names fewer: the others stay offered).
  const [actions, setActions] = useState<string[]>([]);
  useEffect(() => {
    const seen = [...(times?.byAction.map((a) => a.key) ?? []), ...(repeated?.map((r) => r.action) ?? []), ...(expired?.map((e) => e.action) ?? [])];
    setActions((known) => (seen.every((a) => known.includes(a)) ? known : [...new Set([...known, ...seen])].sort()));
  }, [times, repeated, expired]);
  const actionOptions = [...new Set([...actions, ...(params.action ? [params.action] : [])])].sort();
  return (
    <FilterBar testId="analytics-filters">
      <SelectFilter label={t("period")} value={params.days} onChange={(days) => go({ days, day: "" })} options={PERIODS.map((n) => ({ value: n, label: t("last", { n }) }))} anyLabel={null} testId="analytics-period" />
      <SelectFilter label={t("agent")} value={params.agent} onChange={(agent) => go({ agent })} options={(agents.data ?? []).map((a) => ({ value: a.name, label: a.name }))} anyLabel={t("any")} testId="analytics-agent" />
      <SelectFilter label={t("action")} value={params.action} onChange={(action) => go({ action })} options={actionOptions.map((a) => ({ value: a, label: a }))} anyLabel={t("any")} testId="analytics-action" />
      {member ? null : (
        <SelectFilter label={t("approver")} value={params.approver} onChange={(approver) => go({ approver })} options={(people.data ?? []).map((p) => ({ value: p.id, label: personLabel(p) }))} anyLabel={t("any")} testId="analytics-approver" />
      )}
      <SelectFilter label={t("outcome")} value={params.outcome} onChange={(outcome) => go({ outcome: outcome as typeof params.outcome })} options={DECISION_OUTCOMES.map((o) => ({ value: o, label: vocab.outcome(o) }))} anyLabel={t("any")} testId="analytics-outcome" />
    </FilterBar>
  );
}

/** What agents' shadow policies would have decided differently (docs/analytics.md#shadow-rules); nothing when no request differed. */
function ShadowLine({ shadow }: { shadow: TDecisionOutcomesView["shadow"] }) {
  const t = useTranslations("analytics");
  if (shadow.differed === 0) return null;
  return (
    <p className="analytics-shadow" data-testid="analytics-shadow">
      {t("shadowLine", { auto: shadow.wouldAutoApprove, denied: shadow.wouldAutoApproveDenied, edited: shadow.wouldAutoApproveEdited, ask: shadow.wouldAsk })}
    </p>
  );
}

/** The period's requests, per outcome and still waiting; an outcome's figure selects it (again: clears it). */
function Totals({ totals, nav }: { totals: TDecisionOutcomesView["totals"]; nav: TAnalyticsNav }) {
  const t = useTranslations("analytics");
  const vocab = useVocab();
  const locale = useLocale();
  const fmt = (n: number) => n.toLocaleString(locale);
  const { params, href } = nav;
  return (
    <section aria-labelledby="analytics-totals-title">
      <h2 id="analytics-totals-title" className="visually-hidden">
        {t("totals")}
      </h2>
      <ul className="analytics-totals" data-testid="analytics-totals">
        <li>
          <QueryLink href={href({ outcome: "" })} className="card stat analytics-total" aria-current={params.outcome === "" ? "true" : undefined} data-testid="total-requests">
            <span className="stat-value">{fmt(totals.requests)}</span>
            <span className="muted small">{t("requests")}</span>
          </QueryLink>
        </li>
        {DECISION_OUTCOMES.map((o) => (
          <li key={o}>
            <QueryLink href={href({ outcome: params.outcome === o ? "" : o })} className="card stat analytics-total" aria-current={params.outcome === o ? "true" : undefined} data-testid={`total-${o}`} data-outcome={o}>
              <span className="stat-value">{fmt(totals[o])}</span>
              <span className="muted small">
                <OutcomeSwatch outcome={o} /> {vocab.outcome(o)}
              </span>
            </QueryLink>
          </li>
        ))}
        <li>
          <div className="card stat analytics-total" data-testid="total-pending">
            <span className="stat-value">{fmt(totals.pending)}</span>
            <span className="muted small">{t("pending")}</span>
          </div>
        </li>
      </ul>
    </section>
  );
}
