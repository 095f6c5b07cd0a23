"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useActivity } from "./activity";
import { useMe } from "./app-shell";
import { StatusBadge } from "./badges";
import { localToIso, SelectFilter, TextFilter, ToggleGroup, useDebounced } from "./filters";
import { TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { LiveIndicator } from "./use-live-changes";

const STATUSES = ["in_progress", "requires_action", "completed", "denied", "cancelled", "failed"] as const;
const STATUS_LABEL: Record<string, string> = { in_progress: "running", requires_action: "waiting", completed: "completed", denied: "denied", cancelled: "cancelled", failed: "failed" };

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
  const trpc = useTRPC();
  const me = useMe();
  const agents = useQuery(trpc.console.agents.queryOptions(undefined, { staleTime: 300_000 }));
  const people = useQuery(trpc.console.people.queryOptions(undefined, { enabled: me?.role !== "member", staleTime: 60_000 }));
  return (
    <div className="filter-bar" data-testid="list-filters">
      <TextFilter label={searchLabel} value={f.q} onChange={f.setQ} placeholder={searchPlaceholder} testId="filter-search" />
      {children}
      <SelectFilter label="Agent" value={f.agent} onChange={f.setAgent} options={(agents.data ?? []).map((a) => ({ value: a.name, label: a.name }))} testId="filter-agent" />
      {me?.role !== "member" ? <SelectFilter label="User" value={f.userId} onChange={f.setUserId} options={(people.data ?? []).map((p) => ({ value: p.id, label: p.name }))} testId="filter-user" /> : null}
      <TextFilter label="From" type="datetime-local" value={f.from} onChange={f.setFrom} testId="filter-from" />
      <TextFilter label="To" type="datetime-local" value={f.to} onChange={f.setTo} testId="filter-to" />
    </div>
  );
}

/** Every response the signed-in user may see, newest first: filtered server-side, keyset-paginated, live. */
export function ResponsesList() {
  const trpc = useTRPC();
  const { live } = useActivity();
  const f = useListFilters();
  const [statuses, setStatuses] = useState<Array<(typeof STATUSES)[number]>>([]);
  const list = useInfiniteQuery(
    trpc.audit.responses.infiniteQueryOptions(
      { ...f.input, ...(statuses.length > 0 ? { statuses } : {}), limit: 50 },
      { getNextPageParam: (last) => last.nextCursor ?? undefined, placeholderData: (prev) => prev },
    ),
  );
  const rows = list.data?.pages.flatMap((p) => p.rows) ?? [];

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Responses</h1>
          <p className="muted">Every agent run, its status and its full trajectory.</p>
        </div>
        <LiveIndicator live={live} />
      </div>
      <ListFilterBar f={f} searchLabel="Search" searchPlaceholder="Response or session id, or text of the input">
        <ToggleGroup label="Status" values={STATUSES} selected={statuses} onChange={setStatuses} labelOf={(s) => STATUS_LABEL[s] ?? s} testId="filter-status" />
      </ListFilterBar>
      {list.error ? (
        <p role="alert" className="error-box">
          Could not load responses: {list.error.message}
        </p>
      ) : list.isPending ? (
        <p className="muted">Loading…</p>
      ) : rows.length === 0 ? (
        <div className="empty">
          <strong>No responses{Object.keys(f.input).length > 0 || statuses.length > 0 ? " match these filters" : " yet"}.</strong> Invoke an agent with <code>POST /v1/responses</code> and it shows up here.
        </div>
      ) : (
        <>
          <div className="table-wrap">
            <table className="table" data-testid="responses-table">
              <thead>
                <tr>
                  <th scope="col">Response</th>
                  <th scope="col">Status</th>
                  <th scope="col">Agent</th>
                  <th scope="col">User</th>
                  <th scope="col">Session</th>
                  <th scope="col" className="num">
                    Output tokens
                  </th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.id} data-testid="response-row" data-response-id={r.id}>
                    <td>
                      <Link href={`/responses/${r.id}`}>
                        <code>{r.id}</code>
                      </Link>
                    </td>
                    <td className="nowrap">
                      <StatusBadge status={r.status} />
                    </td>
                    <td>{r.agent}</td>
                    <td className="nowrap">{r.user}</td>
                    <td>
                      <Link href={`/sessions/${r.sessionId}`} className="muted">
                        <code>{r.sessionId}</code>
                      </Link>
                    </td>
                    <td className="num">{r.outputTokens.toLocaleString()}</td>
                    <td className="nowrap">
                      <TimeAgo iso={r.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p className="list-foot">
            <span className="muted small" data-testid="shown-count">
              {rows.length} shown
            </span>
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
