"use client";

import { useTranslations } from "next-intl";
import { forwardRef } from "react";
import type { TQuestionRecordView as TRecord } from "./api-types";
import { StatusBadge } from "./badges";
import { LiteralUrl } from "./question-inputs";
import { shapeOf, shownAnswers, URL_CONFIRM } from "./question-model";
import { TimeAgo, useFormatTimestamp } from "./time-labels";
import { personLabel, recordPerson } from "./person";


function LockIcon() {
  return (
    <svg className="lock-icon" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true" focusable="false">
      <path fill="currentColor" d="M4 7V5a4 4 0 1 1 8 0v2h.5A1.5 1.5 0 0 1 14 8.5v5a1.5 1.5 0 0 1-1.5 1.5h-9A1.5 1.5 0 0 1 2 13.5v-5A1.5 1.5 0 0 1 3.5 7H4Zm2 0h4V5a2 2 0 1 0-4 0v2Z" />
    </svg>
  );
}

/** "Answered by Ana", "Declined by Ana", "Cancelled (the run ended)", "Expired". */
export function outcomeTitle(r: TRecord, t: ReturnType<typeof useTranslations<"outcome">>): string {
  const name = r.answeredBy?.name || r.answeredBy?.email ? personLabel(r.answeredBy) : t("someone");
  if (r.status === "answered") return t("answeredBy", { name });
  // (Answers on someone's behalf add a line below the title; the title stays the answerer's.)
  if (r.status === "cancelled") return r.answeredVia === "system" ? t("cancelledBySystem") : t("declinedBy", { name });
  if (r.status === "expired") return t("expired");
  return t("waiting");
}

/** The settled state of a question: who, when, how, and what was answered (secrets as "stored"). */
export const QuestionOutcome = forwardRef<HTMLHeadingElement, { record: TRecord }>(function QuestionOutcome({ record: r }, ref) {
  const t = useTranslations("outcome");
  const tq = useTranslations("question");
  const formatTimestamp = useFormatTimestamp();
  const when = r.answeredAt ?? (r.status === "expired" ? r.expiresAt : null);
  return (
    <section className={`outcome outcome-${r.status}`} aria-labelledby="outcome-title" data-testid="outcome" data-status={r.status}>
      <div className="outcome-head">
        <StatusBadge status={r.status} />
        <h2 id="outcome-title" ref={ref} tabIndex={-1} data-testid="outcome-title">
          {outcomeTitle(r, t)}
        </h2>
      </div>
      {r.answeredBy && r.answeredBy.userId !== r.requester.userId && r.status !== "expired" && r.answeredVia !== "system" ? (
        <p className="small on-behalf" data-testid="on-behalf">
          {t.rich("onBehalf", { name: recordPerson(r.requester), strong: (chunks) => <strong>{chunks}</strong> })}
        </p>
      ) : null}
      <p className="muted small" data-testid="outcome-when">
        {when ? (
          <>
            {r.status === "expired" ? t("whenExpired") : r.status === "answered" ? t("whenAnswered") : t("whenClosed")}
            <time dateTime={when}>{formatTimestamp(when)}</time> (<TimeAgo iso={when} />)
          </>
        ) : null}
        {r.answeredVia && r.status !== "expired" ? t("via", { channel: t.has(`channel.${r.answeredVia}` as "channel.console") ? t(`channel.${r.answeredVia}` as "channel.console") : r.answeredVia }) : null}
      </p>
      <dl className="answers" data-testid="submitted-answers">
        {r.questions.map((q) => {
          if (r.status !== "answered") {
            return (
              <div key={q.questionId} className="answer-item" data-question-id={q.questionId}>
                <dt>
                  <span className="q-header">{q.header}</span> {q.question}
                </dt>
                {q.url ? (
                  <dd className="confirmed-url">
                    <LiteralUrl url={q.url} />
                  </dd>
                ) : null}
                <dd className="muted small">{t("noAnswer")}</dd>
              </div>
            );
          }
          const shown = shownAnswers(q, r.answers, tq);
          const confirmedUrl = shapeOf(q) === "url" && r.answers?.[q.questionId]?.[0] === URL_CONFIRM ? q.url : null;
          return (
            <div key={q.questionId} className="answer-item" data-question-id={q.questionId}>
              <dt>
                <span className="q-header">{q.header}</span> {q.question}
              </dt>
              {shown.map((s, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: fixed order of a question's answer rows
                <dd key={i}>
                  {s.label ? <span className="answer-label">{s.label}: </span> : null}
                  {s.values.map((v, j) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: values of one answer, in order
                    <span key={j} className={v.stored ? "answer-value stored" : "answer-value"} data-testid={v.stored ? "stored-secret" : "answer-value"}>
                      {v.other ? <span className="muted">{t("other")}</span> : null}
                      {v.stored ? (
                        <>
                          <LockIcon />
                          {v.text}
                        </>
                      ) : (
                        v.text
                      )}
                    </span>
                  ))}
                </dd>
              ))}
              {confirmedUrl ? (
                <dd className="confirmed-url">
                  <LiteralUrl url={confirmedUrl} />
                  <a href={confirmedUrl} target="_blank" rel="noopener noreferrer" className="btn btn-quiet">
                    {t("openConfirmed")}
                  </a>
                </dd>
              ) : null}
            </div>
          );
        })}
      </dl>
    </section>
  );
});
