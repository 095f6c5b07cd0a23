"use client";

import Link from "next/link";
import type { TApprovalRow } from "./api-types";
import { StatusBadge } from "./badges";
import { TimeAgo } from "./time-labels";
import { useUserNames } from "./use-user-names";

/** Recently decided (or expired / cancelled) approvals: what, for whom, by whom, when and how. */
export function DecidedList({ rows }: { rows: TApprovalRow[] }) {
  const nameOf = useUserNames(rows.map((r) => r.decidedBy));
  if (rows.length === 0) return <p className="empty">Nothing decided yet.</p>;
  return (
    <div className="table-wrap">
      <table className="table" data-testid="decided-list">
        <thead>
          <tr>
            <th scope="col">Decision</th>
            <th scope="col">Request</th>
            <th scope="col">User</th>
            <th scope="col">Decided by</th>
            <th scope="col">Via</th>
            <th scope="col">When</th>
            <th scope="col">Response</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} data-testid="decided-approval" data-approval-id={r.id}>
              <td>
                <StatusBadge status={r.status} />
              </td>
              <td className="request-cell">
                <code>{r.action}</code>
                <div className="muted small clamp">{r.message}</div>
              </td>
              <td className="nowrap">{r.user}</td>
              <td className="nowrap">{r.decidedBy ? nameOf(r.decidedBy) : r.status === "expired" ? "(expired)" : "—"}</td>
              <td>{r.decidedVia ?? "—"}</td>
              <td className="nowrap">{r.decidedAt ? <TimeAgo iso={r.decidedAt} /> : "—"}</td>
              <td className="nowrap">
                <Link href={`/responses/${r.responseId}`} aria-label={`Open response ${r.responseId}`}>
                  View response
                </Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
