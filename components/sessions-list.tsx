"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useActivity } from "./activity";
import { StatusBadge } from "./badges";
import { SelectFilter } from "./filters";
import { ListFilterBar, useListFilters } from "./responses-list";
import { TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { LiveIndicator } from "./use-live-changes";

/** Agent sessions, newest first: filtered server-side (agent, user, time, active or idle, id), keyset-paginated, live. */
export function SessionsList() {
  const trpc = useTRPC();
  const { live } = useActivity();
  const f = useListFilters();
  const [state, setState] = useState("");
  const list = useInfiniteQuery(
    trpc.audit.sessions.infiniteQueryOptions(
      { ...f.input, ...(state ? { state: state as "active" | "idle" } : {}), limit: 50 },
      { getNextPageParam: (last) => last.nextCursor ?? undefined, placeholderData: (prev) => prev },
    ),
  );
  const rows = list.data?.pages.flatMap((p) => p.rows) ?? [];
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Sessions</h1>
          <p className="muted">Conversations with an agent: each holds a workspace and a sequence of responses.</p>
        </div>
        <LiveIndicator live={live} />
      </div>
      <ListFilterBar f={f} searchLabel="Session id" searchPlaceholder="sess_…">
        <SelectFilter
          label="State"
          value={state}
          onChange={setState}
          options={[
            { value: "active", label: "Running or waiting" },
            { value: "idle", label: "Idle" },
          ]}
          testId="filter-state"
        />
      </ListFilterBar>
      {list.error ? (
        <p role="alert" className="error-box">
          Could not load sessions: {list.error.message}
        </p>
      ) : list.isPending ? (
        <p className="muted">Loading…</p>
      ) : rows.length === 0 ? (
        <div className="empty">
          <strong>No sessions{Object.keys(f.input).length > 0 || state ? " match these filters" : " yet"}.</strong>
        </div>
      ) : (
        <>
          <div className="table-wrap">
            <table className="table" data-testid="sessions-table">
              <thead>
                <tr>
                  <th scope="col">Session</th>
                  <th scope="col">Agent</th>
                  <th scope="col">User</th>
                  <th scope="col" className="num">
                    Responses
                  </th>
                  <th scope="col">Latest</th>
                  <th scope="col">Last activity</th>
                  <th scope="col">Access</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.id} data-testid="session-row" data-session-id={r.id}>
                    <td>
                      <Link href={`/sessions/${r.id}`}>
                        <code>{r.id}</code>
                      </Link>
                    </td>
                    <td>{r.agent}</td>
                    <td className="nowrap">{r.user}</td>
                    <td className="num">
                      {r.responseCount}
                      {r.activeCount > 0 ? <span className="muted small"> ({r.activeCount} active)</span> : null}
                    </td>
                    <td className="nowrap">{r.lastStatus ? <StatusBadge status={r.lastStatus} /> : "—"}</td>
                    <td className="nowrap">{r.lastActivityAt ? <TimeAgo iso={r.lastActivityAt} /> : "—"}</td>
                    <td>
                      {r.access === "full" ? (
                        <>
                          <span className="badge tone-warn">Full access</span>
                          {r.fullAccessGrant ? (
                            <span className="muted small" data-testid="session-access-grant">
                              {" "}
                              by {r.fullAccessGrant.by ?? r.fullAccessGrant.byUserId ?? "the CLI"} <TimeAgo iso={r.fullAccessGrant.at} />
                            </span>
                          ) : null}
                        </>
                      ) : (
                        <span className="muted small">default</span>
                      )}
                    </td>
                    <td className="nowrap">
                      <TimeAgo iso={r.createdAt} />
                    </td>
                  </tr>
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
  );
}
