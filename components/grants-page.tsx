"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { ArgsView } from "./args-view";
import { useMe } from "./app-shell";
import { StatusBadge } from "./badges";
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
      {grants.error || revoke.error ? (
        <p role="alert" className="error-box">
          {(grants.error ?? revoke.error)?.message}
        </p>
      ) : null}
      {grants.isPending ? (
        <p className="muted">Loading…</p>
      ) : rows.length === 0 ? (
        <div className="empty">{status === "active" ? "No active grants. Approvers can give one when approving (More options)." : "No grants yet."}</div>
      ) : (
        <div className="table-wrap">
          <table className="table" data-testid="grants-table">
            <thead>
              <tr>
                <th scope="col">State</th>
                <th scope="col">Operation</th>
                <th scope="col">For</th>
                <th scope="col">Scope</th>
                <th scope="col">Uses</th>
                <th scope="col">Granted</th>
                <th scope="col" className="col-actions">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((g) => (
                <tr key={g.id} data-testid="grant" data-grant-id={g.id} data-status={g.status}>
                  <td>
                    <StatusBadge status={g.status} />
                  </td>
                  <td className="request-cell grant-operation">
                    <code>{g.action}</code>
                    <ArgsView value={g.arguments} />
                  </td>
                  <td className="nowrap">
                    {g.user ?? g.userId}
                    <div className="muted small">{g.agent}</div>
                  </td>
                  <td className="nowrap">
                    {g.scope === "session" ? (
                      <>
                        this session{" "}
                        <Link href={`/sessions/${g.sessionId}`} className="small">
                          <code>{g.sessionId?.slice(0, 16)}…</code>
                        </Link>
                      </>
                    ) : (
                      <span title={g.expiresAt ? formatTimestamp(g.expiresAt) : undefined}>until {g.expiresAt ? formatTimestamp(g.expiresAt) : "—"}</span>
                    )}
                  </td>
                  <td className="nowrap">
                    {g.uses}
                    {g.lastUsedAt ? (
                      <div className="muted small">
                        last used <TimeAgo iso={g.lastUsedAt} />
                      </div>
                    ) : null}
                  </td>
                  <td className="nowrap">
                    <TimeAgo iso={g.createdAt} /> by {nameOf(g.createdBy)}
                    {g.revokedAt ? (
                      <div className="muted small">
                        revoked <TimeAgo iso={g.revokedAt} />
                        {g.revokedBy ? ` by ${nameOf(g.revokedBy)}` : ""}
                      </div>
                    ) : null}
                  </td>
                  <td className="nowrap col-actions">
                    {g.status === "active" && !readOnly ? (
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
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
