"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useLocale, useTranslations } from "next-intl";
import type { RefObject } from "react";
import { DECISION_OUTCOMES } from "../../server/core/vocabulary";
import type { TDecisionRequestRow, TDecisionTimesView, TExpiredRequestRow, TOutputs, TRepeatedRequestRow } from "../api-types";
import { ArgsView } from "../args-view";
import { DataTable } from "../list-kit/data-table";
import { useVocab } from "../list-kit/labels";
import { EmptyState, ListStates } from "../list-kit/list-states";
import { keysetPages, LoadOlder, loadedRows, PAGE_SIZE } from "../list-kit/load-older";
import { useFormatTimestamp, useHumanDuration } from "../time-labels";
import { UNBATCHED, useTRPC } from "../trpc-provider";
import { ChartSection, type TChartQuery } from "./chart-state";
import { useBucketLabel } from "./decision-times";
import { OutcomeBadge, OutcomeSwatch } from "./outcomes";
import { QueryLink, type TAnalyticsNav } from "./query-state";

type TRepeated = TRepeatedRequestRow;
type TExpired = TExpiredRequestRow;
type THistogram = TDecisionTimesView["histogram"];

/** The arguments on one line, cut at `max` characters; the whole of them one click away. */
export function CompactArgs({ value, max = 80 }: { value: unknown; max?: number }) {
  let line: string;
  try {
    line = JSON.stringify(value) ?? String(value);
  } catch {
    line = String(value);
  }
  if (line.length <= max) return <code className="analytics-args-line">{line}</code>;
  return (
    <details className="analytics-args">
      <summary>
        <code className="analytics-args-line">{`${line.slice(0, max - 1)}…`}</code>
      </summary>
      <ArgsView value={value} />
    </details>
  );
}

/** The most repeated requests (`analytics.repeated`): each count links to the requests behind it. */
export function RepeatedRequests({ query, nav, onSelect }: { query: TChartQuery<TOutputs["analytics"]["repeated"]>; nav: TAnalyticsNav; onSelect: () => void }) {
  const t = useTranslations("analytics");
  return (
    <ChartSection name="repeated" title={t("repeated")} hint={t("repeatedHint")} query={query} skeleton={{ rows: 4, columns: 5 }}>
      {(data) => (data.repeated.length === 0 ? <EmptyState testId="repeated-empty">{t("noRepeated")}</EmptyState> : <RepeatedTable repeated={data.repeated} nav={nav} onSelect={onSelect} />)}
    </ChartSection>
  );
}

function RepeatedTable({ repeated, nav, onSelect }: { repeated: TRepeated[]; nav: TAnalyticsNav; onSelect: () => void }) {
  const t = useTranslations("analytics");
  const vocab = useVocab();
  const locale = useLocale();
  return (
    <DataTable
      testId="repeated-table"
      rows={repeated}
      rowKey={(r) => r.requestKey}
      rowProps={(r) => ({ "data-testid": "repeated-row", "data-request-key": r.requestKey, "aria-current": nav.params.requestKey === r.requestKey ? "true" : undefined })}
      columns={[
        { key: "action", header: t("action"), cell: (r) => <code>{r.action}</code> },
        { key: "agent", header: t("agent"), cell: (r) => r.agent },
        { key: "args", header: t("colArguments"), className: "analytics-args-cell", cell: (r) => <CompactArgs value={r.arguments} /> },
        {
          key: "count",
          header: t("colRequests"),
          kind: "num",
          cell: (r) => (
            <QueryLink href={nav.href({ requestKey: r.requestKey })} onFollow={onSelect} data-testid="repeated-link">
              {t("showRequests", { n: r.count })}
            </QueryLink>
          ),
        },
        {
          key: "outcomes",
          header: t("colOutcomes"),
          cell: (r) => (
            <ul className="analytics-outcome-list">
              {DECISION_OUTCOMES.filter((o) => (r.outcomes[o] ?? 0) > 0).map((o) => (
                <li key={o} data-outcome={o}>
                  <OutcomeSwatch outcome={o} /> {t("outcomeCount", { outcome: vocab.outcome(o), n: (r.outcomes[o] ?? 0).toLocaleString(locale) })}
                </li>
              ))}
            </ul>
          ),
        },
      ]}
    />
  );
}

/** The period's latest expiries (`analytics.expired`) and whom their notifications went to (nobody is a finding too). */
export function ExpiredRequests({ query }: { query: TChartQuery<TOutputs["analytics"]["expired"]> }) {
  const t = useTranslations("analytics");
  return (
    <ChartSection name="expired" title={t("expired")} hint={t("expiredHint")} query={query} skeleton={{ rows: 3, columns: 5 }}>
      {(data) => (data.expired.length === 0 ? <EmptyState testId="expired-empty">{t("noExpired")}</EmptyState> : <ExpiredTable expired={data.expired} />)}
    </ChartSection>
  );
}

function ExpiredTable({ expired }: { expired: TExpired[] }) {
  const t = useTranslations("analytics");
  const stamp = useFormatTimestamp();
  return (
    <DataTable
      testId="expired-table"
      rows={expired}
      rowKey={(r) => r.id}
      rowProps={(r) => ({ "data-testid": "expired-row", "data-approval-id": r.id })}
      columns={[
        { key: "asked", header: t("colAsked"), kind: "nowrap", cell: (r) => stamp(r.createdAt) },
        { key: "request", header: t("colMessage"), cell: (r) => <RequestCell action={r.action} agent={r.agent} message={r.message} /> },
        { key: "expired", header: t("colExpiredAt"), kind: "nowrap", cell: (r) => (r.expiredAt ? stamp(r.expiredAt) : "—") },
        {
          key: "notified",
          header: t("colNotified"),
          cell: (r) =>
            r.notified.length > 0 ? (
              <ul className="analytics-notified" data-testid="notified">
                {r.notified.map((n) => (
                  <li key={n}>{n}</li>
                ))}
              </ul>
            ) : (
              <span className="badge tone-warn" data-testid="notified">
                {t("nobodyNotified")}
              </span>
            ),
        },
        { key: "response", header: t("colResponse"), cell: (r) => <ResponseLink id={r.responseId} /> },
      ]}
    />
  );
}

function RequestCell({ action, agent, message }: { action: string; agent: string; message?: string }) {
  return (
    <div className="request-cell">
      <code>{action}</code> <span className="muted small">{agent}</span>
      {message ? <div className="clamp small">{message}</div> : null}
    </div>
  );
}

function ResponseLink({ id }: { id: string }) {
  const t = useTranslations("analytics");
  return (
    <Link href={`/responses/${id}`} aria-label={t("openResponse", { id })} data-testid="response-link">
      <code>{id}</code>
    </Link>
  );
}

/** The person outcomes: the time between the request and its decision is a person's. */
const TIMED = new Set(["approved", "edited", "denied", "replied", "expired"]);

/**
 * The requests behind the selection (a day, an outcome, a repeated request, a bucket of the
 * histogram) within the page's filters, newest first, a page at a time; each row links to its
 * response. A bucket's bounds come from the time-to-decide chart: the list waits for it (never
 * the requests of every bucket meanwhile); a repeated request is named by its key until its chart came.
 */
export function RequestsSection({
  filter,
  nav,
  repeated,
  histogram,
  headingRef,
}: {
  filter: Record<string, string>;
  nav: TAnalyticsNav;
  repeated: TRepeated[] | undefined;
  histogram: THistogram | undefined;
  headingRef: RefObject<HTMLHeadingElement | null>;
}) {
  const t = useTranslations("analytics");
  const vocab = useVocab();
  const trpc = useTRPC();
  const stamp = useFormatTimestamp();
  const duration = useHumanDuration();
  const { params } = nav;
  const bucketLabel = useBucketLabel();
  const waited = params.waited === "" ? null : histogram?.[Number(params.waited)];
  const waitedBefore = histogram?.[Number(params.waited) - 1]?.upToSeconds ?? null;
  const selection = {
    ...(params.day ? { day: params.day } : {}),
    ...(params.requestKey ? { requestKey: params.requestKey } : {}),
    // A histogram bucket: the decisions that took from the bucket before's bound up to its own.
    ...(waited ? { decisionSecondsMin: waitedBefore ?? 0, ...(waited.upToSeconds !== null ? { decisionSecondsMax: waited.upToSeconds } : {}) } : {}),
  };
  const list = useInfiniteQuery(trpc.analytics.requests.infiniteQueryOptions({ ...filter, ...selection, limit: PAGE_SIZE }, { ...keysetPages, ...UNBATCHED, enabled: params.waited === "" || histogram !== undefined }));
  const rows = loadedRows(list);
  const parts = [
    params.day ? t("selDay", { day: params.day }) : null,
    params.outcome ? t("selOutcome", { outcome: vocab.outcome(params.outcome) }) : null,
    params.requestKey ? t("selRepeated", { action: repeated?.find((r) => r.requestKey === params.requestKey)?.action ?? params.requestKey.slice(0, 8) }) : null,
    waited ? t("selWaited", { bucket: bucketLabel(waited.upToSeconds, waitedBefore) }) : null,
  ].filter((p): p is string => p !== null);
  return (
    <section className="section" aria-labelledby="analytics-requests-title" data-testid="analytics-requests">
      <div className="analytics-requests-head">
        <h2 id="analytics-requests-title" ref={headingRef} tabIndex={-1}>
          {t("requestsTitle")}
        </h2>
        {parts.length > 0 ? (
          <p className="analytics-selection" data-testid="analytics-selection">
            <span className="muted">{t("selection")}</span>
            {parts.map((p) => (
              <span key={p} className="chip">
                {p}
              </span>
            ))}
            <button type="button" className="btn btn-quiet btn-small" onClick={() => nav.go({ day: "", outcome: "", requestKey: "", waited: "" })} data-testid="clear-selection">
              {t("clearSelection")}
            </button>
          </p>
        ) : (
          <p className="muted small">{t("requestsAll")}</p>
        )}
      </div>
      <ListStates query={list} isEmpty={rows.length === 0} skeleton={{ rows: 5, columns: 7 }} empty={t("noRequests")}>
        <DataTable<TDecisionRequestRow>
          testId="analytics-requests-table"
          rows={rows}
          rowKey={(r) => `${r.source}:${r.id}`}
          rowProps={(r) => ({ "data-testid": "analytics-request-row", "data-request-id": r.id, "data-response-id": r.responseId, "data-outcome": r.outcome })}
          columns={[
            { key: "asked", header: t("colAsked"), kind: "nowrap", cell: (r) => stamp(r.createdAt) },
            { key: "outcome", header: t("colOutcome"), kind: "nowrap", cell: (r) => <OutcomeBadge outcome={r.outcome} /> },
            { key: "request", header: t("colMessage"), cell: (r) => <RequestCell action={r.action} agent={r.agent} /> },
            { key: "user", header: t("colRequestedBy"), cell: (r) => r.user },
            { key: "decider", header: t("colDecidedBy"), cell: (r) => r.decider ?? "—" },
            { key: "took", header: t("colTook"), kind: "num", className: "nowrap", cell: (r) => (r.decidedAt && TIMED.has(r.outcome) ? duration(new Date(r.decidedAt).getTime() - new Date(r.createdAt).getTime()) : "—") },
            { key: "response", header: t("colResponse"), cell: (r) => <ResponseLink id={r.responseId} /> },
          ]}
        />
        <LoadOlder pages={list} shown={rows.length} label={t("loadMore")} />
      </ListStates>
    </section>
  );
}
