"use client";

import Link from "next/link";
import { useTranslations } from "next-intl";
import { RiskBadge, StatusBadge } from "./badges";
import { useViaLabel } from "./decision-outcome";
import { DataTable } from "./list-kit/data-table";
import { useServerText } from "./list-kit/labels";
import { EmptyState } from "./list-kit/list-states";
import { TimeAgo, useFormatTimestamp } from "./time-labels";
import { Person, personLabel } from "./person";
import { useUserNames } from "./use-user-names";

type TDecidedRow = {
  id: string;
  status: string;
  action: string;
  message: string;
  risk: string;
  user: string;
  userEmail?: string | null;
  reviewer: string | null;
  decidedBy: string | null;
  decidedByName?: string | null;
  decidedByEmail?: string | null;
  decidedVia: string | null;
  decidedAt: string | null;
  responseId: string;
  arguments?: unknown;
  originalArguments?: unknown;
  replyMessage?: string | null;
  grantId?: string | null;
  /** A quorum's votes (empty without one). */
  votes?: Array<{ userId: string; name: string; email: string; decision: string }>;
};

/** Decided (or expired / cancelled) approvals: what, for whom, who decided, when and through which transport. */
export function DecidedList({ rows }: { rows: TDecidedRow[] }) {
  const t = useTranslations("decided");
  const col = useTranslations("columns");
  const viaLabel = useViaLabel();
  const formatTimestamp = useFormatTimestamp();
  const nameOf = useUserNames(rows.map((r) => r.decidedBy));
  if (rows.length === 0) return <EmptyState>{t("empty")}</EmptyState>;
  return (
    <DataTable
      testId="decided-list"
      rows={rows}
      rowKey={(r) => r.id}
      rowProps={(r) => ({ "data-testid": "decided-approval", "data-approval-id": r.id })}
      columns={[
        { key: "decision", header: t("decision"), cell: (r) => <StatusBadge status={r.status} /> },
        { key: "request", header: t("request"), className: "request-cell", cell: (r) => <DecidedRequest r={r} /> },
        { key: "user", header: col("user"), cell: (r) => <Person name={r.user} email={r.userEmail} /> },
        {
          key: "by",
          header: t("by"),
          cell: (r) =>
            r.votes && r.votes.length > 0 ? (
              <span data-testid="decided-votes">{r.votes.map((v) => (v.decision === "deny" ? t("voteDenied", { name: personLabel(v) }) : personLabel(v))).join(t("separator"))}</span>
            ) : r.decidedByName ? (
              <Person name={r.decidedByName} email={r.decidedByEmail} />
            ) : r.decidedBy ? (
              nameOf(r.decidedBy)
            ) : r.status === "expired" ? (
              t("expired")
            ) : (
              "—"
            ),
        },
        { key: "via", header: t("via"), kind: "nowrap", cell: (r) => viaLabel(r.decidedVia) },
        {
          key: "when",
          header: t("when"),
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
          header: col("response"),
          kind: "nowrap",
          cell: (r) => (
            <Link href={`/responses/${r.responseId}`} aria-label={t("openResponse", { id: r.responseId })}>
              {t("viewResponse")}
            </Link>
          ),
        },
      ]}
    />
  );
}

/** What was asked, and what the decision added: an edit, a reply instead, a standing grant. */
function DecidedRequest({ r }: { r: TDecidedRow }) {
  const t = useTranslations("decided");
  const code = (c: React.ReactNode) => <code>{c}</code>;
  const serverText = useServerText();
  return (
    <>
      <code>{r.action}</code> <RiskBadge risk={r.risk} />
      <div className="muted small clamp">{serverText.summary(r)}</div>
      {r.reviewer ? <div className="muted small">{t("reviewedBy", { reviewer: r.reviewer })}</div> : null}
      {r.originalArguments !== null && r.originalArguments !== undefined ? (
        <div className="small" data-testid="decided-edited">
          {t.rich("edited", { requested: JSON.stringify(r.originalArguments), code })}
        </div>
      ) : null}
      {r.replyMessage ? (
        <div className="small" data-testid="decided-reply">
          {t("replied", { message: r.replyMessage })}
        </div>
      ) : null}
      {r.grantId ? (
        <div className="small" data-testid="decided-grant">
          {t.rich("withGrant", { link: (c) => <Link href="/grants">{c}</Link> })}
        </div>
      ) : null}
    </>
  );
}
