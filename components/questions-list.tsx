"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTranslations } from "next-intl";
import { useActivity } from "./activity";
import type { TQuestionRecordView as TRecord } from "./api-types";
import { StatusBadge } from "./badges";
import { DataTable } from "./list-kit/data-table";
import { isTransport, useVocab } from "./list-kit/labels";
import { ListStates } from "./list-kit/list-states";
import { keysetPages, LoadOlder, loadedRows, PAGE_SIZE } from "./list-kit/load-older";
import { kindLabel } from "./question-model";
import { Countdown, TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { LiveIndicator } from "./use-live-changes";
import { PageHead } from "./list-kit/page-head";
import { Person, recordPerson } from "./person";

function QuestionText({ r }: { r: TRecord }) {
  const t = useTranslations("questions");
  const [first, ...rest] = r.questions;
  if (!first) return null;
  return (
    <>
      <span className="chip q-chip">{first.header}</span> <span className="clamp q-cell-text">{first.question}</span>
      {rest.length > 0 ? <span className="muted small"> {t("more", { n: rest.length })}</span> : null}
    </>
  );
}

function ResponseLink({ r }: { r: TRecord }) {
  const t = useTranslations("questions");
  const col = useTranslations("columns");
  if (!r.responseId) return <span className="muted small">{t("gateway")}</span>;
  return (
    <Link href={`/responses/${r.responseId}`} aria-label={t("openResponse", { id: r.responseId })}>
      {col("response")}
    </Link>
  );
}

const answeredByText = (r: TRecord, t: ReturnType<typeof useTranslations<"questions">>): string => {
  if (r.answeredBy && !(r.status === "cancelled" && r.answeredVia === "system")) return recordPerson(r.answeredBy);
  if (r.status === "expired") return t("nobodyExpired");
  if (r.status === "cancelled") return t("runEnded");
  return "—";
};

/** Answered by someone other than the person asked (an operator or admin, where policy allows): recorded and shown. */
const onBehalf = (r: TRecord): boolean => r.status === "answered" && !!r.answeredBy && r.answeredBy.userId !== r.requester.userId;

/** Who settled the question (and on whose behalf), and through which channel. */
function AnsweredBy({ r }: { r: TRecord }) {
  const t = useTranslations("questions");
  const vocab = useVocab();
  return (
    <>
      <span data-testid="answered-by">{answeredByText(r, t)}</span>
      {onBehalf(r) ? (
        <div className="small on-behalf" data-testid="on-behalf">
          {t("onBehalf", { who: recordPerson(r.requester) })}
        </div>
      ) : null}
      {r.answeredVia && r.status !== "expired" ? <div className="muted small">{t("via", { via: isTransport(r.answeredVia) ? vocab.via(r.answeredVia) : r.answeredVia })}</div> : null}
    </>
  );
}

/** Questions agents asked people: pending ones live (with expiry), and the recently settled. */
export function QuestionsList() {
  const t = useTranslations("questions");
  const qt = useTranslations("question");
  const trpc = useTRPC();
  const { live } = useActivity();
  const pending = useInfiniteQuery(trpc.question.page.infiniteQueryOptions({ status: "pending", limit: PAGE_SIZE }, keysetPages));
  const all = useInfiniteQuery(trpc.question.page.infiniteQueryOptions({ status: "settled", limit: PAGE_SIZE }, keysetPages));
  const pendingRows = loadedRows(pending);
  // Newest asked first, as the server pages them (keyset on the creation time).
  const settled = loadedRows(all);

  return (
    <>
      <PageHead title={t("title")} lede={t("lede")}>
        <LiveIndicator live={live} />
      </PageHead>

      <section aria-labelledby="pending-questions-title" className="section">
        <h2 id="pending-questions-title">
          {t("waiting")} <span className="count" data-testid="pending-questions-count">{pending.hasNextPage ? `${pendingRows.length}+` : pendingRows.length}</span>
        </h2>
        <ListStates query={pending} isEmpty={pendingRows.length === 0} skeleton={{ rows: 3, columns: 5 }} empty={<><strong>{t("nothingToAnswer")}</strong> {t("appearsHere")}</>}>
          <DataTable
            testId="pending-questions"
            rows={pendingRows}
            rowKey={(r) => r.id}
            rowProps={(r) => ({ "data-testid": "pending-question", "data-question-id": r.id })}
            columns={[
              { key: "question", header: t("question"), className: "request-cell question-cell", cell: (r) => <QuestionText r={r} /> },
              { key: "kind", header: t("kind"), className: "kind-cell", cell: (r) => kindLabel(r.questions, qt) },
              {
                key: "asked",
                header: t("askedBy"),
                cell: (r) => (
                  <>
                    <Person name={r.requester.name} email={r.requester.email} fallback={r.requester.userId} />
                    <div className="muted small">
                      <TimeAgo iso={r.createdAt} />
                    </div>
                  </>
                ),
              },
              { key: "expires", header: t("expires"), kind: "nowrap", cell: (r) => <Countdown iso={r.expiresAt} /> },
              {
                key: "links",
                header: <span className="visually-hidden">{t("links")}</span>,
                kind: "actions",
                cell: (r) => (
                  <div className="row-links">
                    <Link href={`/answer/${r.id}`} className="btn btn-primary btn-small" aria-label={t("answerLabel", { question: r.questions[0]?.question ?? r.id })}>
                      {t("answer")}
                    </Link>
                    <ResponseLink r={r} />
                  </div>
                ),
              },
            ]}
          />
          <LoadOlder pages={pending} shown={pendingRows.length} testId="load-older-pending-questions" />
        </ListStates>
      </section>

      <section aria-labelledby="settled-questions-title" className="section">
        <h2 id="settled-questions-title">{t("recentlySettled")}</h2>
        <ListStates query={all} isEmpty={settled.length === 0} skeleton={{ rows: 3, columns: 7 }} empty={t("nothingAnswered")}>
          <DataTable
            testId="settled-questions"
            rows={settled}
            rowKey={(r) => r.id}
            rowProps={(r) => ({ "data-testid": "settled-question", "data-question-id": r.id })}
            columns={[
              { key: "outcome", header: t("outcome"), cell: (r) => <StatusBadge status={r.status} /> },
              { key: "question", header: t("question"), className: "request-cell question-cell", cell: (r) => <QuestionText r={r} /> },
              { key: "kind", header: t("kind"), className: "kind-cell", cell: (r) => kindLabel(r.questions, qt) },
              { key: "asked", header: t("askedBy"), cell: (r) => <Person name={r.requester.name} email={r.requester.email} fallback={r.requester.userId} /> },
              { key: "answered", header: t("answeredBy"), cell: (r) => <AnsweredBy r={r} /> },
              { key: "when", header: t("when"), kind: "nowrap", cell: (r) => <TimeAgo iso={r.answeredAt ?? r.expiresAt} /> },
              {
                key: "links",
                header: <span className="visually-hidden">{t("links")}</span>,
                kind: "nowrap",
                cell: (r) => (
                  <div className="row-links">
                    <Link href={`/answer/${r.id}`} aria-label={t("detailsLabel", { question: r.questions[0]?.question ?? r.id })}>
                      {t("details")}
                    </Link>
                    <ResponseLink r={r} />
                  </div>
                ),
              },
            ]}
          />
          <LoadOlder pages={all} shown={settled.length} testId="load-older-settled-questions" />
        </ListStates>
      </section>
    </>
  );
}
