"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useActivity } from "./activity";
import type { TQuestionRecordView as TRecord } from "./api-types";
import { StatusBadge } from "./badges";
import { DataTable } from "./list-kit/data-table";
import { ListStates } from "./list-kit/list-states";
import { kindLabel } from "./question-model";
import { Countdown, TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { LiveIndicator } from "./use-live-changes";

const SETTLED_SHOWN = 50;

function QuestionText({ r }: { r: TRecord }) {
  const [first, ...rest] = r.questions;
  if (!first) return null;
  return (
    <>
      <span className="chip q-chip">{first.header}</span> <span className="clamp q-cell-text">{first.question}</span>
      {rest.length > 0 ? <span className="muted small"> +{rest.length} more</span> : null}
    </>
  );
}

function ResponseLink({ r }: { r: TRecord }) {
  if (!r.responseId) return <span className="muted small">Gateway</span>;
  return (
    <Link href={`/responses/${r.responseId}`} aria-label={`Open response ${r.responseId}`}>
      Response
    </Link>
  );
}

const answeredByText = (r: TRecord): string => {
  if (r.answeredBy && !(r.status === "cancelled" && r.answeredVia === "system")) return r.answeredBy.name ?? r.answeredBy.userId;
  if (r.status === "expired") return "(nobody, expired)";
  if (r.status === "cancelled") return "(run ended)";
  return "—";
};

/** Answered by someone other than the person asked (an operator or admin, where policy allows): recorded and shown. */
const onBehalf = (r: TRecord): boolean => r.status === "answered" && !!r.answeredBy && r.answeredBy.userId !== r.requester.userId;

/** Who settled the question (and on whose behalf), and through which channel. */
function AnsweredBy({ r }: { r: TRecord }) {
  return (
    <>
      <span data-testid="answered-by">{answeredByText(r)}</span>
      {onBehalf(r) ? (
        <div className="small on-behalf" data-testid="on-behalf">
          on behalf of {r.requester.name ?? r.requester.userId}
        </div>
      ) : null}
      {r.answeredVia && r.status !== "expired" ? <div className="muted small">via {r.answeredVia}</div> : null}
    </>
  );
}

/** Questions agents asked people: pending ones live (with expiry), and the recently settled. */
export function QuestionsList() {
  const trpc = useTRPC();
  const { live } = useActivity();
  const pending = useQuery(trpc.question.list.queryOptions({ status: "pending" }));
  const all = useQuery(trpc.question.list.queryOptions({ status: "all" }));
  const pendingRows = pending.data?.questions ?? [];
  const settledAt = (r: TRecord) => new Date(r.answeredAt ?? r.expiresAt).getTime();
  const settled = (all.data?.questions ?? [])
    .filter((r) => r.status !== "pending")
    .sort((a, b) => settledAt(b) - settledAt(a))
    .slice(0, SETTLED_SHOWN);

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Questions</h1>
          <p className="muted">What agents asked a person: choices, free text, secrets, forms and links to confirm.</p>
        </div>
        <LiveIndicator live={live} />
      </div>

      <section aria-labelledby="pending-questions-title" className="section">
        <h2 id="pending-questions-title">
          Waiting for an answer <span className="count" data-testid="pending-questions-count">{pendingRows.length}</span>
        </h2>
        <ListStates query={pending} isEmpty={pendingRows.length === 0} skeleton={{ rows: 3, columns: 5 }} empty={<><strong>Nothing to answer.</strong> When an agent asks a person something, it appears here automatically.</>}>
          <DataTable
            testId="pending-questions"
            rows={pendingRows}
            rowKey={(r) => r.id}
            rowProps={(r) => ({ "data-testid": "pending-question", "data-question-id": r.id })}
            columns={[
              { key: "question", header: "Question", className: "request-cell question-cell", cell: (r) => <QuestionText r={r} /> },
              { key: "kind", header: "Kind", className: "kind-cell", cell: (r) => kindLabel(r.questions) },
              {
                key: "asked",
                header: "Asked by",
                kind: "nowrap",
                cell: (r) => (
                  <>
                    {r.requester.name ?? r.requester.userId}
                    <div className="muted small">
                      <TimeAgo iso={r.createdAt} />
                    </div>
                  </>
                ),
              },
              { key: "expires", header: "Expires", kind: "nowrap", cell: (r) => <Countdown iso={r.expiresAt} /> },
              {
                key: "links",
                header: <span className="visually-hidden">Links</span>,
                kind: "actions",
                cell: (r) => (
                  <div className="row-links">
                    <Link href={`/answer/${r.id}`} className="btn btn-primary btn-small" aria-label={`Answer: ${r.questions[0]?.question ?? r.id}`}>
                      Answer
                    </Link>
                    <ResponseLink r={r} />
                  </div>
                ),
              },
            ]}
          />
        </ListStates>
      </section>

      <section aria-labelledby="settled-questions-title" className="section">
        <h2 id="settled-questions-title">Recently settled</h2>
        <ListStates query={all} isEmpty={settled.length === 0} skeleton={{ rows: 3, columns: 7 }} empty="Nothing answered yet.">
          <DataTable
            testId="settled-questions"
            rows={settled}
            rowKey={(r) => r.id}
            rowProps={(r) => ({ "data-testid": "settled-question", "data-question-id": r.id })}
            columns={[
              { key: "outcome", header: "Outcome", cell: (r) => <StatusBadge status={r.status} /> },
              { key: "question", header: "Question", className: "request-cell question-cell", cell: (r) => <QuestionText r={r} /> },
              { key: "kind", header: "Kind", className: "kind-cell", cell: (r) => kindLabel(r.questions) },
              { key: "asked", header: "Asked by", kind: "nowrap", cell: (r) => r.requester.name ?? r.requester.userId },
              { key: "answered", header: "Answered by", kind: "nowrap", cell: (r) => <AnsweredBy r={r} /> },
              { key: "when", header: "When", kind: "nowrap", cell: (r) => <TimeAgo iso={r.answeredAt ?? r.expiresAt} /> },
              {
                key: "links",
                header: <span className="visually-hidden">Links</span>,
                kind: "nowrap",
                cell: (r) => (
                  <div className="row-links">
                    <Link href={`/answer/${r.id}`} aria-label={`Details of question: ${r.questions[0]?.question ?? r.id}`}>
                      Details
                    </Link>
                    <ResponseLink r={r} />
                  </div>
                ),
              },
            ]}
          />
        </ListStates>
      </section>
    </>
  );
}
