"use client";

import Link from "next/link";
import { RiskBadge, StatusBadge } from "./badges";
import { viaLabel } from "./decision-outcome";
import { DataTable } from "./list-kit/data-table";
import { EmptyState } from "./list-kit/list-states";
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
  if (rows.length === 0) return <EmptyState>Nothing decided yet.</EmptyState>;
  return (
    <DataTable
      testId="decided-list"
      rows={rows}
      rowKey={(r) => r.id}
      rowProps={(r) => ({ "data-testid": "decided-approval", "data-approval-id": r.id })}
      columns={[
        { key: "decision", header: "Decision", cell: (r) => <StatusBadge status={r.status} /> },
        { key: "request", header: "Request", className: "request-cell", cell: (r) => <DecidedRequest r={r} /> },
        { key: "user", header: "User", kind: "nowrap", cell: (r) => r.user },
        {
          key: "by",
          header: "Decided by",
          kind: "nowrap",
          cell: (r) =>
            r.votes && r.votes.length > 0 ? (
              <span data-testid="decided-votes">{r.votes.map((v) => `${v.name}${v.decision === "deny" ? " (denied)" : ""}`).join(", ")}</span>
            ) : r.decidedBy ? (
              nameOf(r.decidedBy)
            ) : r.status === "expired" ? (
              "(expired)"
            ) : (
              "—"
            ),
        },
        { key: "via", header: "Via", kind: "nowrap", cell: (r) => viaLabel(r.decidedVia) },
        {
          key: "when",
          header: "When",
          kind: "nowrap",
          cell: (r) =>
            r.decidedAt ? (
              <span title={formatTimestamp(r.decidedAt)}>
                <TimeAgo iso={r.decidedAt} />
              </span>
            ) : (
              "—"
            ),
        },
        {
          key: "response",
          header: "Response",
          kind: "nowrap",
          cell: (r) => (
            <Link href={`/responses/${r.responseId}`} aria-label={`Open response ${r.responseId}`}>
              View response
            </Link>
          ),
        },
      ]}
    />
  );
}

/** What was asked, and what the decision added: an edit, a reply instead, a standing grant. */
function DecidedRequest({ r }: { r: TDecidedRow }) {
  return (
    <>
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
    </>
  );
}
