"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useLocale, useTranslations } from "next-intl";
import { useState } from "react";
import { RESPONSE_STATUSES, type TResponseStatus } from "@/server/core/vocabulary";
import { useActivity } from "./activity";
import { useMe } from "./app-shell";
import { StatusBadge } from "./badges";
import { localToIso, SelectFilter, TextFilter, ToggleGroup, useDebounced } from "./filters";
import { DataTable } from "./list-kit/data-table";
import { FilterBar } from "./list-kit/filter-bar";
import { useVocab } from "./list-kit/labels";
import { ListStates } from "./list-kit/list-states";
import { LoadOlder } from "./list-kit/load-older";
import { TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { LiveIndicator } from "./use-live-changes";
import { PageHead } from "./list-kit/page-head";
import { Person, personLabel } from "./person";


/** The filters the response and session lists share (agent, user, time range, search). */
export function useListFilters() {
  const [agent, setAgent] = useState("");
  const [userId, setUserId] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [q, setQ] = useState("");
  const query = useDebounced(q.trim(), 300);
  const input = {
    ...(agent ? { agent } : {}),
    ...(userId ? { userId } : {}),
    ...(localToIso(from) ? { from: localToIso(from) } : {}),
    ...(localToIso(to) ? { to: localToIso(to) } : {}),
    ...(query ? { q: query } : {}),
  };
  return { agent, setAgent, userId, setUserId, from, setFrom, to, setTo, q, setQ, input };
}

export type TListFilters = ReturnType<typeof useListFilters>;

/** The agent / user / from / to / search controls of a list. */
export function ListFilterBar({ f, searchLabel, searchPlaceholder, children }: { f: TListFilters; searchLabel: string; searchPlaceholder: string; children?: React.ReactNode }) {
  const col = useTranslations("columns");
  const trpc = useTRPC();
  const me = useMe();
  const agents = useQuery(trpc.console.agents.queryOptions(undefined, { staleTime: 300_000 }));
  const people = useQuery(trpc.console.people.queryOptions(undefined, { enabled: me?.role !== "member", staleTime: 60_000 }));
  return (
    <FilterBar testId="list-filters">
      <TextFilter label={searchLabel} value={f.q} onChange={f.setQ} placeholder={searchPlaceholder} testId="filter-search" />
      {children}
      <SelectFilter label={col("agent")} value={f.agent} onChange={f.setAgent} options={(agents.data ?? []).map((a) => ({ value: a.name, label: a.name }))} testId="filter-agent" />
      {me?.role !== "member" ? <SelectFilter label={col("user")} value={f.userId} onChange={f.setUserId} options={(people.data ?? []).map((p) => ({ value: p.id, label: personLabel(p) }))} testId="filter-user" /> : null}
      <TextFilter label={col("from")} type="datetime-local" value={f.from} onChange={f.setFrom} testId="filter-from" />
      <TextFilter label={col("to")} type="datetime-local" value={f.to} onChange={f.setTo} testId="filter-to" />
    </FilterBar>
  );
}

/** Every response the signed-in user may see, newest first: filtered server-side, keyset-paginated, live. */
export function ResponsesList() {
  const t = useTranslations("responses");
  const col = useTranslations("columns");
  const vocab = useVocab();
  const locale = useLocale();
  const trpc = useTRPC();
  const { live } = useActivity();
  const f = useListFilters();
  const [statuses, setStatuses] = useState<TResponseStatus[]>([]);
  const list = useInfiniteQuery(
    trpc.audit.responses.infiniteQueryOptions(
      { ...f.input, ...(statuses.length > 0 ? { statuses } : {}), limit: 50 },
      { getNextPageParam: (last) => last.nextCursor ?? undefined, placeholderData: (prev) => prev },
    ),
  );
  const rows = list.data?.pages.flatMap((p) => p.rows) ?? [];

  return (
    <>
      <PageHead title={t("title")} lede={t("lede")}>
        <LiveIndicator live={live} />
      </PageHead>
      <ListFilterBar f={f} searchLabel={col("search")} searchPlaceholder={t("searchPlaceholder")}>
        <ToggleGroup label={col("status")} values={RESPONSE_STATUSES} selected={statuses} onChange={setStatuses} labelOf={vocab.responseStatus} testId="filter-status" />
      </ListFilterBar>
      <ListStates query={list} isEmpty={rows.length === 0} skeleton={{ rows: 8, columns: 7 }} empty={<>
          <strong>{Object.keys(f.input).length > 0 || statuses.length > 0 ? t("noneMatch") : t("noneYet")}</strong> {t.rich("emptyHint", { code: (c) => <code>{c}</code> })}
        </>}>
        <DataTable
          testId="responses-table"
          rows={rows}
          rowKey={(r) => r.id}
          rowProps={(r) => ({ "data-testid": "response-row", "data-response-id": r.id })}
          columns={[
            { key: "id", header: col("response"), cell: (r) => <Link href={`/responses/${r.id}`}><code>{r.id}</code></Link> },
            { key: "status", header: col("status"), kind: "nowrap", cell: (r) => <StatusBadge status={r.status} /> },
            { key: "agent", header: col("agent"), cell: (r) => r.agent },
            { key: "user", header: col("user"), cell: (r) => <Person name={r.user} email={r.userEmail} /> },
            { key: "session", header: col("session"), cell: (r) => <Link href={`/sessions/${r.sessionId}`} className="muted"><code>{r.sessionId}</code></Link> },
            { key: "tokens", header: t("outputTokens"), kind: "num", cell: (r) => r.outputTokens.toLocaleString(locale) },
            { key: "created", header: col("created"), kind: "nowrap", cell: (r) => <TimeAgo iso={r.createdAt} /> },
          ]}
        />
        <LoadOlder pages={list} shown={rows.length} />
      </ListStates>
    </>
  );
}
