"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTranslations } from "next-intl";
import { useState } from "react";
import { useActivity } from "./activity";
import { StatusBadge } from "./badges";
import { SelectFilter } from "./filters";
import { DataTable } from "./list-kit/data-table";
import { ListStates } from "./list-kit/list-states";
import { LoadOlder } from "./list-kit/load-older";
import { ListFilterBar, useListFilters } from "./responses-list";
import { TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { LiveIndicator } from "./use-live-changes";
import { SESSION_STATES, type TSessionState } from "@/server/core/vocabulary";
import { PageHead } from "./list-kit/page-head";
import { Person, personLabel } from "./person";

/** Agent sessions, newest first: filtered server-side (agent, user, time, active or idle, id), keyset-paginated, live. */
export function SessionsList() {
  const t = useTranslations("sessions");
  const col = useTranslations("columns");
  const trpc = useTRPC();
  const { live } = useActivity();
  const f = useListFilters();
  const [state, setState] = useState("");
  const list = useInfiniteQuery(
    trpc.audit.sessions.infiniteQueryOptions(
      { ...f.input, ...(state ? { state: state as TSessionState } : {}), limit: 50 },
      { getNextPageParam: (last) => last.nextCursor ?? undefined, placeholderData: (prev) => prev },
    ),
  );
  const rows = list.data?.pages.flatMap((p) => p.rows) ?? [];
  return (
    <>
      <PageHead title={t("title")} lede={t("lede")}>
        <LiveIndicator live={live} />
      </PageHead>
      <ListFilterBar f={f} searchLabel={t("searchLabel")} searchPlaceholder="sess_…">
        <SelectFilter
          label={t("state")}
          value={state}
          onChange={setState}
          options={SESSION_STATES.map((s) => ({ value: s, label: t(s) }))}
          testId="filter-state"
        />
      </ListFilterBar>
      <ListStates query={list} isEmpty={rows.length === 0} skeleton={{ rows: 8, columns: 8 }} empty={<strong>{Object.keys(f.input).length > 0 || state ? t("noneMatch") : t("noneYet")}</strong>}>
        <DataTable
          testId="sessions-table"
          rows={rows}
          rowKey={(r) => r.id}
          rowProps={(r) => ({ "data-testid": "session-row", "data-session-id": r.id })}
          columns={[
            { key: "id", header: col("session"), cell: (r) => <Link href={`/sessions/${r.id}`}><code>{r.id}</code></Link> },
            { key: "agent", header: col("agent"), cell: (r) => r.agent },
            { key: "user", header: col("user"), cell: (r) => <Person name={r.user} email={r.userEmail} /> },
            {
              key: "responses",
              header: t("responses"),
              kind: "num",
              cell: (r) => (
                <>
                  {r.responseCount}
                  {r.activeCount > 0 ? <span className="muted small"> {t("activeCount", { n: r.activeCount })}</span> : null}
                </>
              ),
            },
            { key: "latest", header: t("latest"), kind: "nowrap", cell: (r) => (r.lastStatus ? <StatusBadge status={r.lastStatus} /> : "—") },
            { key: "activity", header: t("lastActivity"), kind: "nowrap", cell: (r) => (r.lastActivityAt ? <TimeAgo iso={r.lastActivityAt} /> : "—") },
            { key: "access", header: t("access"), cell: (r) => <SessionAccess session={r} /> },
            { key: "created", header: col("created"), kind: "nowrap", cell: (r) => <TimeAgo iso={r.createdAt} /> },
          ]}
        />
        <LoadOlder pages={list} shown={rows.length} />
      </ListStates>
    </>
  );
}

type TSessionAccess = { access: string; fullAccessGrant: { by: string | null; byEmail: string | null; byUserId: string | null; at: string } | null };

/** Default, or full access with who granted it and when. */
function SessionAccess({ session: r }: { session: TSessionAccess }) {
  const t = useTranslations("sessions");
  if (r.access !== "full") return <span className="muted small">{t("accessDefault")}</span>;
  return (
    <>
      <span className="badge tone-warn">{t("fullAccess")}</span>
      {r.fullAccessGrant ? (
        <span className="muted small" data-testid="session-access-grant">
          {" "}
          {t("grantedBy", { who: r.fullAccessGrant.by ? personLabel({ name: r.fullAccessGrant.by, email: r.fullAccessGrant.byEmail }) : (r.fullAccessGrant.byUserId ?? t("cli")) })} <TimeAgo iso={r.fullAccessGrant.at} />
        </span>
      ) : null}
    </>
  );
}
