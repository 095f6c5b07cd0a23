"use client";

import { useQuery } from "@tanstack/react-query";
import { useLocale, useTranslations } from "next-intl";
import { useEffect, useMemo, useRef, useState } from "react";
import { DECISION_OUTCOMES } from "../server/core/vocabulary";
import { DecisionTimes } from "./analytics/decision-times";
import { OutcomeSwatch } from "./analytics/outcomes";
import { PerDayChart } from "./analytics/per-day";
import { MAX_PERIOD_DAYS, PERIODS, QueryLink, type TAnalyticsNav, useAnalyticsParams } from "./analytics/query-state";
import { ExpiredRequests, RepeatedRequests, RequestsSection } from "./analytics/request-lists";
import type { TDecisionAnalyticsView } from "./api-types";
import { useMe } from "./app-shell";
import { SelectFilter } from "./filters";
import { FilterBar } from "./list-kit/filter-bar";
import { useVocab } from "./list-kit/labels";
import { EmptyState, ErrorState, ListSkeleton } from "./list-kit/list-states";
import { PageHead } from "./list-kit/page-head";
import { personLabel } from "./person";
import { useTRPC } from "./trpc-provider";
import { periodEndingTonight, viewerZone } from "./viewer-time";

/**
 * Decision analytics (`analytics.decisions`): where approvers' attention goes, in the viewer's time
 * zone. Every figure links to the requests behind it (`analytics.requests`), listed at the foot of
 * the page; the filters and the selection live in the address (./analytics/query-state.tsx).
 */
export function AnalyticsPage() {
  const t = useTranslations("analytics");
  const trpc = useTRPC();
  const me = useMe();
  const member = me?.role === "member";
  const nav = useAnalyticsParams();
  const { params } = nav;
  const timeZone = useMemo(viewerZone, []);
  // Fixed per choice of period (a stable query key); today is included whole.
  const range = useMemo(() => periodEndingTonight(Number(params.days), MAX_PERIOD_DAYS), [params.days]);
  const filter = useMemo(() => {
    const chosen = { agent: params.agent, action: params.action, approver: member ? "" : params.approver, outcome: params.outcome };
    return { ...range, timeZone, ...Object.fromEntries(Object.entries(chosen).filter(([, v]) => v !== "")) };
  }, [range, timeZone, params.agent, params.action, params.approver, params.outcome, member]);
  const figures = useQuery(trpc.analytics.decisions.queryOptions(filter, { placeholderData: (prev) => prev }));
  const data = figures.data as TDecisionAnalyticsView | undefined;
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
          data && data.perDay.length > 0 ? (
            <p className="muted small" data-testid="analytics-days">
              {t("periodDays", { first: data.perDay[0]?.day ?? "", last: data.perDay[data.perDay.length - 1]?.day ?? "" })}
            </p>
          ) : null
        }
      />
      <Filters nav={nav} member={member} data={data} />
      {figures.error ? (
        <ErrorState error={figures.error} />
      ) : !data ? (
        <ListSkeleton rows={6} columns={5} />
      ) : (
        <div aria-busy={figures.isPlaceholderData} className="analytics-figures" data-testid="analytics-figures">
          <Totals totals={data.totals} nav={nav} />
          {data.totals.requests === 0 ? (
            <EmptyState testId="analytics-empty">
              <strong>{t("empty")}</strong> {t("emptyHint", { filtered: filtered ? "yes" : "no" })}
            </EmptyState>
          ) : (
            <>
              <PerDayChart data={data} nav={nav} timeZone={timeZone} onSelect={showRequests} />
              <DecisionTimes times={data.decisionTimes} nav={nav} member={member} onSelect={showRequests} />
              <RepeatedRequests repeated={data.repeated} nav={nav} onSelect={showRequests} />
              <ExpiredRequests expired={data.expired} />
              <RequestsSection filter={filter} nav={nav} repeated={data.repeated} histogram={data.decisionTimes.histogram} headingRef={requestsHeading} />
            </>
          )}
        </div>
      )}
    </>
  );
}

/** Period, agent, action, approver (not for a member, who sees only its own requests) and outcome. */
function Filters({ nav, member, data }: { nav: TAnalyticsNav; member: boolean; data: TDecisionAnalyticsView | undefined }) {
  const t = useTranslations("analytics");
  const vocab = useVocab();
  const trpc = useTRPC();
  const { params, go } = nav;
  const agents = useQuery(trpc.console.agents.queryOptions(undefined, { staleTime: 300_000 }));
  const people = useQuery(trpc.console.people.queryOptions(undefined, { enabled: !member, staleTime: 60_000 }));
  // The actions seen in the figures so far (a filtered answer names fewer: the others stay offered).
  const [actions, setActions] = useState<string[]>([]);
  useEffect(() => {
    if (!data) return;
    const seen = [...data.decisionTimes.byAction.map((a) => a.key), ...data.repeated.map((r) => r.action), ...data.expired.map((e) => e.action)];
    setActions((known) => (seen.every((a) => known.includes(a)) ? known : [...new Set([...known, ...seen])].sort()));
  }, [data]);
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

/** The period's requests, per outcome and still waiting; an outcome's figure selects it (again: clears it). */
function Totals({ totals, nav }: { totals: TDecisionAnalyticsView["totals"]; nav: TAnalyticsNav }) {
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
