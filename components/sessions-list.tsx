"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
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
      <ListStates query={list} isEmpty={rows.length === 0} skeleton={{ rows: 8, columns: 8 }} empty={<strong>No sessions{Object.keys(f.input).length > 0 || state ? " match these filters" : " yet"}.</strong>}>
        <DataTable
          testId="sessions-table"
          rows={rows}
          rowKey={(r) => r.id}
          rowProps={(r) => ({ "data-testid": "session-row", "data-session-id": r.id })}
          columns={[
            { key: "id", header: "Session", cell: (r) => <Link href={`/sessions/${r.id}`}><code>{r.id}</code></Link> },
            { key: "agent", header: "Agent", cell: (r) => r.agent },
            { key: "user", header: "User", kind: "nowrap", cell: (r) => r.user },
            {
              key: "responses",
              header: "Responses",
              kind: "num",
              cell: (r) => (
                <>
                  {r.responseCount}
                  {r.activeCount > 0 ? <span className="muted small"> ({r.activeCount} active)</span> : null}
                </>
              ),
            },
            { key: "latest", header: "Latest", kind: "nowrap", cell: (r) => (r.lastStatus ? <StatusBadge status={r.lastStatus} /> : "—") },
            { key: "activity", header: "Last activity", kind: "nowrap", cell: (r) => (r.lastActivityAt ? <TimeAgo iso={r.lastActivityAt} /> : "—") },
            { key: "access", header: "Access", cell: (r) => <SessionAccess session={r} /> },
            { key: "created", header: "Created", kind: "nowrap", cell: (r) => <TimeAgo iso={r.createdAt} /> },
          ]}
        />
        <LoadOlder pages={list} shown={rows.length} />
      </ListStates>
    </>
  );
}

type TSessionAccess = { access: string; fullAccessGrant: { by: string | null; byUserId: string | null; at: string } | null };

/** Default, or full access with who granted it and when. */
function SessionAccess({ session: r }: { session: TSessionAccess }) {
  if (r.access !== "full") return <span className="muted small">default</span>;
  return (
    <>
      <span className="badge tone-warn">Full access</span>
      {r.fullAccessGrant ? (
        <span className="muted small" data-testid="session-access-grant">
          {" "}
          by {r.fullAccessGrant.by ?? r.fullAccessGrant.byUserId ?? "the CLI"} <TimeAgo iso={r.fullAccessGrant.at} />
        </span>
      ) : null}
    </>
  );
}
