"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useMe } from "./app-shell";
import { ArgsView } from "./args-view";
import { StatusBadge } from "./badges";
import { DataTable } from "./list-kit/data-table";
import { ListStates } from "./list-kit/list-states";
import { formatTimestamp, TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { TwoStepAction } from "./two-step-action";
import { useUserNames } from "./use-user-names";

/**
 * Standing grants: which exact operations run without a prompt, for whom, until when, how often
 * they were used; revocable in one click (the server refuses auditors). Revocation applies before
 * the next use.
 */
export function GrantsPage() {
  const trpc = useTRPC();
  const me = useMe();
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<"active" | "all">("active");
  const grants = useQuery(trpc.grants.list.queryOptions({ status }, { refetchInterval: 10_000 }));
  const revoke = useMutation(trpc.grants.revoke.mutationOptions({ onSettled: () => void queryClient.invalidateQueries(trpc.grants.list.pathFilter()) }));
  const [confirming, setConfirming] = useState<string | null>(null);
  const rows = grants.data ?? [];
  const nameOf = useUserNames(rows.flatMap((g) => [g.createdBy, g.revokedBy]));
  const readOnly = me?.role === "auditor";

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Standing grants</h1>
          <p className="muted">
            An approver may allow one exact operation (same action, same arguments) for the rest of a session or for some days. Every use is recorded in the
            run's trajectory; revoking takes effect before the next use.
          </p>
        </div>
        <div className="filter">
          <label htmlFor="grant-status">Show</label>
          <select id="grant-status" className="input input-compact" value={status} onChange={(e) => setStatus(e.target.value as "active" | "all")}>
            <option value="active">Active grants</option>
            <option value="all">All, including revoked and expired</option>
          </select>
        </div>
      </div>
      {readOnly ? (
        <p className="notice" data-testid="read-only">
          Auditors are read-only: you can see every grant but not revoke one.
        </p>
      ) : null}
      {revoke.error ? (
        <p role="alert" className="error-box">
          {revoke.error.message}
        </p>
      ) : null}
      <ListStates
        query={grants}
        isEmpty={rows.length === 0}
        skeleton={{ rows: 4, columns: 7 }}
        empty={status === "active" ? "No active grants. Approvers can give one when approving (More options)." : "No grants yet."}
      >
        <DataTable
          testId="grants-table"
          rows={rows}
          rowKey={(g) => g.id}
          rowProps={(g) => ({ "data-testid": "grant", "data-grant-id": g.id, "data-status": g.status })}
          columns={[
            { key: "state", header: "State", cell: (g) => <StatusBadge status={g.status} /> },
            {
              key: "operation",
              header: "Operation",
              className: "request-cell grant-operation",
              cell: (g) => (
                <>
                  <code>{g.action}</code>
                  <ArgsView value={g.arguments} />
                </>
              ),
            },
            {
              key: "for",
              header: "For",
              kind: "nowrap",
              cell: (g) => (
                <>
                  {g.user ?? g.userId}
                  <div className="muted small">{g.agent}</div>
                </>
              ),
            },
            { key: "scope", header: "Scope", kind: "nowrap", cell: (g) => <GrantScopeCell grant={g} /> },
            {
              key: "uses",
              header: "Uses",
              kind: "nowrap",
              cell: (g) => (
                <>
                  {g.uses}
                  {g.lastUsedAt ? (
                    <div className="muted small">
                      last used <TimeAgo iso={g.lastUsedAt} />
                    </div>
                  ) : null}
                </>
              ),
            },
            {
              key: "granted",
              header: "Granted",
              kind: "nowrap",
              cell: (g) => (
                <>
                  <TimeAgo iso={g.createdAt} /> by {nameOf(g.createdBy)}
                  {g.revokedAt ? (
                    <div className="muted small">
                      revoked <TimeAgo iso={g.revokedAt} />
                      {g.revokedBy ? ` by ${nameOf(g.revokedBy)}` : ""}
                    </div>
                  ) : null}
                </>
              ),
            },
            {
              key: "actions",
              header: <span className="visually-hidden">Actions</span>,
              kind: "actions",
              cell: (g) =>
                g.status === "active" && !readOnly ? (
                  <TwoStepAction
                    asking={confirming === g.id}
                    onAsk={() => setConfirming(g.id)}
                    onCancel={() => setConfirming(null)}
                    onConfirm={() => revoke.mutate({ grantId: g.id }, { onSettled: () => setConfirming(null) })}
                    label="Revoke…"
                    confirmLabel="Revoke now"
                    askClassName="btn btn-quiet btn-small"
                    busy={revoke.isPending}
                    testId="revoke-grant"
                  />
                ) : null,
            },
          ]}
        />
      </ListStates>
    </>
  );
}

/** "this session sess_…" or "until <date>". */
function GrantScopeCell({ grant: g }: { grant: { scope: string; sessionId: string | null; expiresAt: string | null } }) {
  if (g.scope === "session")
    return (
      <>
        this session{" "}
        <Link href={`/sessions/${g.sessionId}`} className="small">
          <code>{g.sessionId?.slice(0, 16)}…</code>
        </Link>
      </>
    );
  return <span title={g.expiresAt ? formatTimestamp(g.expiresAt) : undefined}>until {g.expiresAt ? formatTimestamp(g.expiresAt) : "—"}</span>;
}
