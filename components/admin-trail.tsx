"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTranslations } from "next-intl";
import { useState } from "react";
import { localToIso, SelectFilter, TextFilter } from "./filters";
import { DataTable } from "./list-kit/data-table";
import { FilterBar } from "./list-kit/filter-bar";
import { ListStates } from "./list-kit/list-states";
import { LoadOlder } from "./list-kit/load-older";
import { TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import type en from "@/messages/en.json";
import { ADMIN_ACTIONS, ADMIN_CHANNELS, type TAdminChannel } from "@/server/core/admin-trail";
import { PageHead } from "./list-kit/page-head";
import { Person, personLabel } from "./person";

type TActionKey = keyof (typeof en)["adminTrail"]["actions"];
/** Message keys cannot hold dots: `user.role_changed` is labelled by `actions.user_role_changed`. */
const actionKey = (action: string) => action.replaceAll(".", "_") as TActionKey;
const isChannel = (c: string): c is TAdminChannel => (ADMIN_CHANNELS as readonly string[]).includes(c);

/**
 * The admin trail: every administrative action (who, what, when, from where), newest first,
 * filtered server-side by actor, action and time, keyset-paginated ("Load older"), downloadable as
 * JSONL with the same filters. Admins and auditors read it; nobody edits it.
 */
export function AdminTrail() {
  const t = useTranslations("adminTrail");
  const trpc = useTRPC();
  const [actor, setActor] = useState("");
  const [action, setAction] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const filter = {
    ...(actor ? { actor } : {}),
    ...(action ? { action } : {}),
    ...(localToIso(from) ? { from: localToIso(from) } : {}),
    ...(localToIso(to) ? { to: localToIso(to) } : {}),
  };
  const list = useInfiniteQuery(
    trpc.admin.trail.infiniteQueryOptions({ ...filter, limit: 50 }, { getNextPageParam: (last) => last.nextCursor ?? undefined, placeholderData: (prev) => prev }),
  );
  const people = useQuery(trpc.admin.trailActors.queryOptions());
  const rows = list.data?.pages.flatMap((p) => p.rows) ?? [];
  const exportHref = `/api/export/admin-trail${Object.keys(filter).length > 0 ? `?${new URLSearchParams(filter as Record<string, string>).toString()}` : ""}`;
  const actionLabel = (a: string) => ((ADMIN_ACTIONS as readonly string[]).includes(a) ? t(`actions.${actionKey(a)}`) : a);
  const channelLabel = (c: string) => (isChannel(c) ? t(`channels.${c}`) : c);
  const who = (r: (typeof rows)[number]) =>
    r.actorUserId ? (
      <Person name={r.actorName} email={r.actorEmail} fallback={r.actorUserId} />
    ) : r.channel === "cli" ? (
      t("cliActor", { osUser: r.osUser ?? "?" })
    ) : r.channel === "sso" ? (
      t("ssoActor")
    ) : (
      t("systemActor")
    );
  return (
    <>
      <PageHead title={t("title")} lede={t("lede")}>
        <div className="actions">
          <Link href="/admin" className="btn btn-quiet">
            {t("backToAdmin")}
          </Link>
          <a href={exportHref} download className="btn" data-testid="trail-export">
            {t("export")}
          </a>
        </div>
      </PageHead>
      <FilterBar testId="trail-filters">
        <SelectFilter
          label={t("actor")}
          value={actor}
          onChange={setActor}
          options={[...(people.data ?? []).map((p) => ({ value: p.id, label: personLabel(p) })), { value: "cli", label: t("cliAny") }, { value: "system", label: t("systemActor") }, { value: "sso", label: t("ssoActor") }]}
          testId="trail-filter-actor"
        />
        <SelectFilter label={t("action")} value={action} onChange={setAction} options={ADMIN_ACTIONS.map((a) => ({ value: a, label: actionLabel(a) }))} testId="trail-filter-action" />
        <TextFilter label={t("from")} type="datetime-local" value={from} onChange={setFrom} testId="trail-filter-from" />
        <TextFilter label={t("to")} type="datetime-local" value={to} onChange={setTo} testId="trail-filter-to" />
      </FilterBar>
      <ListStates query={list} isEmpty={rows.length === 0} skeleton={{ rows: 8, columns: 6 }} empty={<strong>{Object.keys(filter).length > 0 ? t("noneMatch") : t("noneYet")}</strong>}>
        <DataTable
          testId="trail-table"
          rows={rows}
          rowKey={(r) => r.id}
          rowProps={(r) => ({ "data-testid": "trail-row", "data-action": r.action })}
          columns={[
            { key: "at", header: t("when"), kind: "nowrap", cell: (r) => <TimeAgo iso={r.at} /> },
            { key: "actor", header: t("actor"), cell: (r) => who(r) },
            { key: "action", header: t("action"), cell: (r) => <code title={r.action}>{actionLabel(r.action)}</code> },
            {
              key: "target",
              header: t("target"),
              cell: (r) => (
                <>
                  <code>{`${r.targetType} ${r.targetId}`}</code>
                  {r.targetName || r.targetEmail ? (
                    <div className="small" data-testid="trail-target-person">
                      <Person name={r.targetName} email={r.targetEmail} />
                    </div>
                  ) : null}
                </>
              ),
            },
            { key: "detail", header: t("detail"), cell: (r) => <code className="small">{JSON.stringify(r.detail)}</code> },
            { key: "from", header: t("where"), kind: "nowrap", cell: (r) => `${channelLabel(r.channel)}${r.clientIp ? ` · ${r.clientIp}` : ""}` },
          ]}
        />
        <LoadOlder pages={list} shown={rows.length} />
      </ListStates>
    </>
  );
}
