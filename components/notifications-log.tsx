"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { NOTIFICATION_STATUSES, type TNotificationStatus } from "@/server/core/vocabulary";
import { useMe } from "./app-shell";
import { SelectFilter } from "./filters";
import { DataTable } from "./list-kit/data-table";
import { FilterBar } from "./list-kit/filter-bar";
import { NOTIFICATION_STATUS_TONE } from "./list-kit/labels";
import { ListSkeleton, ListStates } from "./list-kit/list-states";
import { LoadOlder } from "./list-kit/load-older";
import { TimeAgo } from "./time-labels";
import { trpcErrorCode, useTRPC } from "./trpc-provider";

type TStatus = TNotificationStatus;

/** The delivery log of webhook, Slack and email notifications, newest first, with every attempt. */
export function NotificationsLog() {
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
      <div className="page-head">
        <div>
          <h1>Notifications</h1>
          <p className="muted">Every webhook, Slack message and email sent about approvals and questions, with each delivery attempt.</p>
        </div>
      </div>
      {!allowed || trpcErrorCode(list.error) === "FORBIDDEN" ? (
        <p className="empty">Only admins, operators and auditors can read the delivery log.</p>
      ) : (
        <>
          <FilterBar testId="notification-filters">
            <SelectFilter label="Status" value={status} onChange={(v) => setStatus(v as TStatus | "")} options={NOTIFICATION_STATUSES.map((s) => ({ value: s, label: s }))} testId="filter-status" />
            <SelectFilter label="Channel" value={channel} onChange={setChannel} options={(channels.data ?? []).map((c) => ({ value: c, label: c }))} testId="filter-channel" />
          </FilterBar>
          <ListStates
            query={list}
            isEmpty={rows.length === 0}
            skeleton={{ rows: 6, columns: 8 }}
            empty={
              <>
                <strong>No notifications{status || channel ? " match these filters" : " yet"}.</strong> Set <code>COUNTERSIGN_NOTIFY_CONFIG</code> to send them (see the README).
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
                { key: "status", header: "Status", kind: "nowrap", cell: (r) => <span className={`badge tone-${NOTIFICATION_STATUS_TONE[r.status as TStatus] ?? "muted"}`}>{r.status}</span> },
                { key: "event", header: "Event", cell: (r) => `${r.subjectKind}.${r.event}` },
                {
                  key: "subject",
                  header: "Subject",
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
                  header: "Channel",
                  kind: "nowrap",
                  cell: (r) => (
                    <>
                      {r.channel} <span className="muted small">({r.channelType})</span>
                    </>
                  ),
                },
                { key: "recipient", header: "Recipient", cell: (r) => r.recipient },
                {
                  key: "attempts",
                  header: "Attempts",
                  kind: "num",
                  cell: (r) => (
                    <button type="button" className="btn btn-quiet btn-small" aria-expanded={open === r.id} onClick={() => setOpen(open === r.id ? null : r.id)} data-testid="show-attempts">
                      {r.attempts}
                    </button>
                  ),
                },
                { key: "error", header: "Last error", className: "small", cell: (r) => r.lastError ?? (r.lastStatusCode ? `OK (${r.lastStatusCode})` : "") },
                { key: "created", header: "Created", kind: "nowrap", cell: (r) => <TimeAgo iso={r.createdAt} /> },
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
  const trpc = useTRPC();
  const attempts = useQuery(trpc.notifications.attempts.queryOptions({ notificationId }));
  if (attempts.error) return <p className="error-box">Could not load the attempts: {attempts.error.message}</p>;
  if (!attempts.data) return <ListSkeleton rows={2} columns={6} label="Loading the attempts" />;
  if (attempts.data.length === 0) return <p className="muted">No attempt yet.</p>;
  return (
    <table className="table" data-testid="attempts-table">
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">Outcome</th>
          <th scope="col">Status code</th>
          <th scope="col">Error</th>
          <th scope="col" className="num">
            Duration
          </th>
          <th scope="col">At</th>
        </tr>
      </thead>
      <tbody>
        {attempts.data.map((a) => (
          <tr key={a.attempt} data-testid="attempt-row">
            <td>{a.attempt}</td>
            <td>{a.ok ? "delivered" : "failed"}</td>
            <td>{a.statusCode ?? "—"}</td>
            <td className="small">{a.error ?? ""}</td>
            <td className="num">{a.durationMs} ms</td>
            <td className="nowrap">
              <TimeAgo iso={a.at} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
