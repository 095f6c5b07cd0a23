"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { TQuestionRecordView as TRecord } from "./api-types";
import { StatusBadge } from "./badges";
import { kindLabel } from "./question-model";
import { Countdown, TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { useActivity } from "./activity";
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
        {pending.error ? (
          <p role="alert" className="error-box">
            Could not load questions: {pending.error.message}
          </p>
        ) : pending.isPending ? (
          <p className="muted">Loading…</p>
        ) : pendingRows.length === 0 ? (
          <div className="empty">
            <strong>Nothing to answer.</strong> When an agent asks a person something, it appears here automatically.
          </div>
        ) : (
          <div className="table-wrap">
            <table className="table" data-testid="pending-questions">
              <thead>
                <tr>
                  <th scope="col">Question</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Asked by</th>
                  <th scope="col">Expires</th>
                  <th scope="col" className="col-actions">
                    <span className="visually-hidden">Links</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {pendingRows.map((r) => (
                  <tr key={r.id} data-testid="pending-question" data-question-id={r.id}>
                    <td className="request-cell question-cell">
                      <QuestionText r={r} />
                    </td>
                    <td className="kind-cell">{kindLabel(r.questions)}</td>
                    <td className="nowrap">
                      {r.requester.name ?? r.requester.userId}
                      <div className="muted small">
                        <TimeAgo iso={r.createdAt} />
                      </div>
                    </td>
                    <td className="nowrap">
                      <Countdown iso={r.expiresAt} />
                    </td>
                    <td className="nowrap col-actions">
                      <div className="row-links">
                        <Link href={`/answer/${r.id}`} className="btn btn-primary btn-small" aria-label={`Answer: ${r.questions[0]?.question ?? r.id}`}>
                          Answer
                        </Link>
                        <ResponseLink r={r} />
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section aria-labelledby="settled-questions-title" className="section">
        <h2 id="settled-questions-title">Recently settled</h2>
        {all.error ? (
          <p role="alert" className="error-box">
            Could not load settled questions: {all.error.message}
          </p>
        ) : all.isPending ? (
          <p className="muted">Loading…</p>
        ) : settled.length === 0 ? (
          <p className="empty">Nothing answered yet.</p>
        ) : (
          <div className="table-wrap">
            <table className="table" data-testid="settled-questions">
              <thead>
                <tr>
                  <th scope="col">Outcome</th>
                  <th scope="col">Question</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Asked by</th>
                  <th scope="col">Answered by</th>
                  <th scope="col">When</th>
                  <th scope="col">
                    <span className="visually-hidden">Links</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {settled.map((r) => (
                  <tr key={r.id} data-testid="settled-question" data-question-id={r.id}>
                    <td>
                      <StatusBadge status={r.status} />
                    </td>
                    <td className="request-cell question-cell">
                      <QuestionText r={r} />
                    </td>
                    <td className="kind-cell">{kindLabel(r.questions)}</td>
                    <td className="nowrap">{r.requester.name ?? r.requester.userId}</td>
                    <td className="nowrap">
                      <span data-testid="answered-by">{answeredByText(r)}</span>
                      {onBehalf(r) ? (
                        <div className="small on-behalf" data-testid="on-behalf">
                          on behalf of {r.requester.name ?? r.requester.userId}
                        </div>
                      ) : null}
                      {r.answeredVia && r.status !== "expired" ? <div className="muted small">via {r.answeredVia}</div> : null}
                    </td>
                    <td className="nowrap">
                      <TimeAgo iso={r.answeredAt ?? r.expiresAt} />
                    </td>
                    <td className="nowrap">
                      <div className="row-links">
                        <Link href={`/answer/${r.id}`} aria-label={`Details of question: ${r.questions[0]?.question ?? r.id}`}>
                          Details
                        </Link>
                        <ResponseLink r={r} />
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
