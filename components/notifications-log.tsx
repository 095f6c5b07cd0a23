"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Fragment, useState } from "react";
import { useMe } from "./app-shell";
import { SelectFilter } from "./filters";
import { TimeAgo } from "./time-labels";
import { trpcErrorCode, useTRPC } from "./trpc-provider";

const STATUS_TONE: Record<string, string> = { pending: "warn", delivered: "ok", failed: "bad" };
const STATUSES = ["pending", "delivered", "failed"] as const;
type TStatus = (typeof STATUSES)[number];

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
          <div className="filter-bar" data-testid="notification-filters">
            <SelectFilter label="Status" value={status} onChange={(v) => setStatus(v as TStatus | "")} options={STATUSES.map((s) => ({ value: s, label: s }))} testId="filter-status" />
            <SelectFilter label="Channel" value={channel} onChange={setChannel} options={(channels.data ?? []).map((c) => ({ value: c, label: c }))} testId="filter-channel" />
          </div>
          {list.error ? (
            <p role="alert" className="error-box">
              Could not load the delivery log: {list.error.message}
            </p>
          ) : list.isPending ? (
            <p className="muted">Loading…</p>
          ) : rows.length === 0 ? (
            <div className="empty">
              <strong>No notifications{status || channel ? " match these filters" : " yet"}.</strong> Set <code>COUNTERSIGN_NOTIFY_CONFIG</code> to send them (see the README).
            </div>
          ) : (
            <>
              <div className="table-wrap">
                <table className="table" data-testid="notifications-table">
                  <thead>
                    <tr>
                      <th scope="col">Status</th>
                      <th scope="col">Event</th>
                      <th scope="col">Subject</th>
                      <th scope="col">Channel</th>
                      <th scope="col">Recipient</th>
                      <th scope="col" className="num">
                        Attempts
                      </th>
                      <th scope="col">Last error</th>
                      <th scope="col">Created</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((r) => (
                      <Fragment key={r.id}>
                        <tr data-testid="notification-row" data-notification-id={r.id} data-status={r.status}>
                          <td className="nowrap">
                            <span className={`badge tone-${STATUS_TONE[r.status] ?? "muted"}`}>{r.status}</span>
                          </td>
                          <td>{r.event}</td>
                          <td>
                            {r.responseId ? (
                              <Link href={`/responses/${r.responseId}`}>
                                <code>{r.subjectId}</code>
                              </Link>
                            ) : (
                              <code>{r.subjectId}</code>
                            )}
                          </td>
                          <td className="nowrap">
                            {r.channel} <span className="muted small">({r.channelType})</span>
                          </td>
                          <td>{r.recipient}</td>
                          <td className="num">
                            <button type="button" className="btn btn-quiet btn-small" aria-expanded={open === r.id} onClick={() => setOpen(open === r.id ? null : r.id)} data-testid="show-attempts">
                              {r.attempts}
                            </button>
                          </td>
                          <td className="small">{r.lastError ?? (r.lastStatusCode ? `OK (${r.lastStatusCode})` : "")}</td>
                          <td className="nowrap">
                            <TimeAgo iso={r.createdAt} />
                          </td>
                        </tr>
                        {open === r.id ? (
                          <tr>
                            <td colSpan={8}>
                              <Attempts notificationId={r.id} />
                            </td>
                          </tr>
                        ) : null}
                      </Fragment>
                    ))}
                  </tbody>
                </table>
              </div>
              <p className="list-foot">
                <span className="muted small">{rows.length} shown</span>
                {list.hasNextPage ? (
                  <button type="button" className="btn btn-quiet" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage} data-testid="load-more">
                    {list.isFetchingNextPage ? "Loading…" : "Load older"}
                  </button>
                ) : null}
              </p>
            </>
          )}
        </>
      )}
    </>
  );
}

function Attempts({ notificationId }: { notificationId: string }) {
  const trpc = useTRPC();
  const attempts = useQuery(trpc.notifications.attempts.queryOptions({ notificationId }));
  if (attempts.error) return <p className="error-box">Could not load the attempts: {attempts.error.message}</p>;
  if (!attempts.data) return <p className="muted">Loading…</p>;
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
