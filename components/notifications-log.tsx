"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTranslations } from "next-intl";
import { useState } from "react";
import { NOTIFICATION_STATUSES, type TNotificationStatus } from "@/server/core/vocabulary";
import { useMe } from "./app-shell";
import { SelectFilter } from "./filters";
import { DataTable } from "./list-kit/data-table";
import { FilterBar } from "./list-kit/filter-bar";
import { NOTIFICATION_STATUS_TONE, useVocab } from "./list-kit/labels";
import { ListSkeleton, ListStates } from "./list-kit/list-states";
import { LoadOlder } from "./list-kit/load-older";
import { TimeAgo } from "./time-labels";
import { trpcErrorCode, useTRPC } from "./trpc-provider";
import { PageHead } from "./list-kit/page-head";

type TStatus = TNotificationStatus;

/** The delivery log of webhook, Slack and email notifications, newest first, with every attempt. */
export function NotificationsLog() {
  const t = useTranslations("notifications");
  const col = useTranslations("columns");
  const vocab = useVocab();
  const trpc = useTRPC();
  const me = useMe();
  const [status, setStatus] = useState<TStatus | "">("");
  const [channel, setChannel] = useState("");
  const [open, setOpen] = useState<string | null>(null);
  const allowed = me?.role !== "member";
  const channels = useQuery(trpc.notifications.channels.queryOptions(undefined, { enabled: allowed, staleTime: 30_000 }));
  const list = useInfiniteQuery(
    trpc.notifications.list.infiniteQueryOptions(
      { ...(status ? { status } : {}), ...(channel ? { channel } : {}), limit: 50 },
      { enabled: allowed, getNextPageParam: (last) => last.nextCursor ?? undefined, placeholderData: (prev) => prev, refetchInterval: 5000 },
    ),
  );
  const rows = list.data?.pages.flatMap((p) => p.rows) ?? [];

  return (
    <>
      <PageHead title={t("title")} lede={t("lede")} />
      {!allowed || trpcErrorCode(list.error) === "FORBIDDEN" ? (
        <p className="empty">{t("forbidden")}</p>
      ) : (
        <>
          <FilterBar testId="notification-filters">
            <SelectFilter label={col("status")} value={status} onChange={(v) => setStatus(v as TStatus | "")} options={NOTIFICATION_STATUSES.map((s) => ({ value: s, label: vocab.notificationStatus(s) }))} testId="filter-status" />
            <SelectFilter label={t("channel")} value={channel} onChange={setChannel} options={(channels.data ?? []).map((c) => ({ value: c, label: c }))} testId="filter-channel" />
          </FilterBar>
          <ListStates
            query={list}
            isEmpty={rows.length === 0}
            skeleton={{ rows: 6, columns: 8 }}
            empty={
              <>
                <strong>{status || channel ? t("noneMatch") : t("noneYet")}</strong> {t.rich("emptyHint", { code: (c) => <code>{c}</code> })}
              </>
            }
          >
            <DataTable
              testId="notifications-table"
              rows={rows}
              rowKey={(r) => r.id}
              rowProps={(r) => ({ "data-testid": "notification-row", "data-notification-id": r.id, "data-status": r.status })}
              after={(r) => (open === r.id ? <Attempts notificationId={r.id} /> : null)}
              columns={[
                { key: "status", header: col("status"), kind: "nowrap", cell: (r) => <span className={`badge ${NOTIFICATION_STATUS_TONE[r.status as TStatus] ?? "tone-muted"}`}>{(NOTIFICATION_STATUSES as readonly string[]).includes(r.status) ? vocab.notificationStatus(r.status as TStatus) : r.status}</span> },
                { key: "event", header: t("event"), cell: (r) => `${r.subjectKind}.${r.event}` },
                {
                  key: "subject",
                  header: t("subject"),
                  cell: (r) =>
                    r.responseId ? (
                      <Link href={`/responses/${r.responseId}`}>
                        <code>{r.subjectId}</code>
                      </Link>
                    ) : (
                      <code>{r.subjectId}</code>
                    ),
                },
                {
                  key: "channel",
                  header: t("channel"),
                  kind: "nowrap",
                  cell: (r) => (
                    <>
                      {r.channel} <span className="muted small">({r.channelType})</span>
                    </>
                  ),
                },
                { key: "recipient", header: t("recipient"), cell: (r) => r.recipient },
                {
                  key: "attempts",
                  header: t("attempts"),
                  kind: "num",
                  cell: (r) => (
                    <button type="button" className="btn btn-quiet btn-small" aria-expanded={open === r.id} onClick={() => setOpen(open === r.id ? null : r.id)} data-testid="show-attempts">
                      {r.attempts}
                    </button>
                  ),
                },
                { key: "error", header: t("lastError"), className: "small", cell: (r) => r.lastError ?? (r.lastStatusCode ? t("ok", { code: r.lastStatusCode }) : "") },
                { key: "created", header: col("created"), kind: "nowrap", cell: (r) => <TimeAgo iso={r.createdAt} /> },
              ]}
            />
            <LoadOlder pages={list} shown={rows.length} />
          </ListStates>
        </>
      )}
    </>
  );
}

function Attempts({ notificationId }: { notificationId: string }) {
  const t = useTranslations("notifications");
  const vocab = useVocab();
  const trpc = useTRPC();
  const attempts = useQuery(trpc.notifications.attempts.queryOptions({ notificationId }));
  if (attempts.error) return <p className="error-box">{t("attemptsError", { message: attempts.error.message })}</p>;
  if (!attempts.data) return <ListSkeleton rows={2} columns={6} label={t("loadingAttempts")} />;
  if (attempts.data.length === 0) return <p className="muted">{t("noAttempt")}</p>;
  return (
    <table className="table" data-testid="attempts-table">
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">{t("outcome")}</th>
          <th scope="col">{t("statusCode")}</th>
          <th scope="col">{t("error")}</th>
          <th scope="col" className="num">
            {t("duration")}
          </th>
          <th scope="col">{t("at")}</th>
        </tr>
      </thead>
      <tbody>
        {attempts.data.map((a) => (
          <tr key={a.attempt} data-testid="attempt-row">
            <td>{a.attempt}</td>
            <td>{vocab.notificationStatus(a.ok ? "delivered" : "failed")}</td>
            <td>{a.statusCode ?? "—"}</td>
            <td className="small">{a.error ?? ""}</td>
            <td className="num">{t("ms", { n: a.durationMs })}</td>
            <td className="nowrap">
              <TimeAgo iso={a.at} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
