"use client";

import Link from "next/link";
import { RiskBadge, StatusBadge } from "./badges";
import { viaLabel } from "./decision-outcome";
import { formatTimestamp, TimeAgo } from "./time-labels";
import { useUserNames } from "./use-user-names";

type TDecidedRow = {
  id: string;
  status: string;
  action: string;
  message: string;
  risk: string;
  user: string;
  reviewer: string | null;
  decidedBy: string | null;
  decidedVia: string | null;
  decidedAt: string | null;
  responseId: string;
  originalArguments?: unknown;
  replyMessage?: string | null;
  grantId?: string | null;
  /** A quorum's votes (empty without one). */
  votes?: Array<{ userId: string; name: string; decision: string }>;
};

/** Decided (or expired / cancelled) approvals: what, for whom, who decided, when and through which transport. */
export function DecidedList({ rows }: { rows: TDecidedRow[] }) {
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
                <code>{r.action}</code> <RiskBadge risk={r.risk} />
                <div className="muted small clamp">{r.message}</div>
                {r.reviewer ? <div className="muted small">reviewed by {r.reviewer}</div> : null}
                {r.originalArguments !== null && r.originalArguments !== undefined ? (
                  <div className="small" data-testid="decided-edited">
                    Edited before approval (requested: <code>{JSON.stringify(r.originalArguments)}</code>)
                  </div>
                ) : null}
                {r.replyMessage ? (
                  <div className="small" data-testid="decided-reply">
                    Replied instead: “{r.replyMessage}”
                  </div>
                ) : null}
                {r.grantId ? (
                  <div className="small" data-testid="decided-grant">
                    With a standing grant (<Link href="/grants">grants</Link>)
                  </div>
                ) : null}
              </td>
              <td className="nowrap">{r.user}</td>
              <td className="nowrap">
                {r.votes && r.votes.length > 0 ? (
                  <span data-testid="decided-votes">{r.votes.map((v) => `${v.name}${v.decision === "deny" ? " (denied)" : ""}`).join(", ")}</span>
                ) : r.decidedBy ? (
                  nameOf(r.decidedBy)
                ) : r.status === "expired" ? (
                  "(expired)"
                ) : (
                  "—"
                )}
              </td>
              <td className="nowrap">{viaLabel(r.decidedVia)}</td>
              <td className="nowrap">{r.decidedAt ? <span title={formatTimestamp(r.decidedAt)}><TimeAgo iso={r.decidedAt} /></span> : "—"}</td>
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
