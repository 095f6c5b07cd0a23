"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTranslations } from "next-intl";
import { type ReactNode, useEffect, useRef, useState } from "react";
import { AnswerForm, type TLostRace } from "./answer-form";
import type { TQuestionRecordView as TRecord } from "./api-types";
import { QuestionContext } from "./question-context";
import { kindLabel, shapeOf } from "./question-model";
import { QuestionOutcome } from "./question-outcome";
import { Countdown, TimeAgo } from "./time-labels";
import { trpcErrorCode, useTRPC } from "./trpc-provider";
import { useErrorSentence } from "./use-error-sentence";
import { LiveIndicator, useLiveChanges } from "./use-live-changes";
import { useNow } from "./use-now";
import { DetailSkeleton } from "./detail-skeleton";
import { personLabel, recordPerson } from "./person";

/**
 * The end-user answer page of one question. Signed in with the console cookie, or through an
 * answer link: `/answer/{id}?access_token=<api key>` is exchanged by the server for a short-lived
 * cookie that opens this question only (server/api/http/answer-link.ts), and the page arrives here
 * without the key. A link visitor polls instead of subscribing: the cookie opens no live feed.
 * `linkRefused`: the link's key did not work (`?link=invalid`).
 */
export function AnswerPage({ questionId, linkRefused }: { questionId: string; linkRefused: boolean }) {
  return <AnswerScreen questionId={questionId} linkRefused={linkRefused} />;
}

function Frame({ who, viaToken, children }: { who: string | null; viaToken: boolean; children: ReactNode }) {
  const t = useTranslations("answer");
  const common = useTranslations("common");
  const brand = (
    <>
      <span className="brand-mark" aria-hidden="true">
        ✓
      </span>
      Countersign
    </>
  );
  return (
    <>
      <a className="skip-link" href="#main">
        {common("skipToContent")}
      </a>
      <header className="topbar">
        <div className="topbar-inner answer-topbar">
          {who && !viaToken ? (
            <Link href="/" className="brand">
              {brand}
            </Link>
          ) : (
            <span className="brand">{brand}</span>
          )}
          {who ? (
            <span className="answer-who small" data-testid="answering-as">
              {t.rich("answeringAs", { name: who, strong: (chunks) => <strong>{chunks}</strong> })}
              {viaToken ? <span className="muted">{t("linkAccess")}</span> : null}
            </span>
          ) : null}
        </div>
      </header>
      <main id="main" className="answer-main">
        {children}
      </main>
    </>
  );
}

function SignInPrompt({ questionId, viaToken }: { questionId: string; viaToken: boolean }) {
  const t = useTranslations("answer");
  const next = `/answer/${encodeURIComponent(questionId)}`;
  return (
    <section className="card answer-card" aria-labelledby="signin-title" data-testid="sign-in-prompt">
      <h1 id="signin-title">{viaToken ? t("linkGoneTitle") : t("signInTitle")}</h1>
      <p>{viaToken ? t("linkGoneText") : t("signInText")}</p>
      <p>
        <Link className="btn btn-primary" href={`/login?next=${encodeURIComponent(next)}`}>
          {t("signInButton")}
        </Link>
      </p>
    </section>
  );
}

function AnswerScreen({ questionId, linkRefused }: { questionId: string; linkRefused: boolean }) {
  const trpc = useTRPC();
  const t = useTranslations("answer");
  const common = useTranslations("common");
  const errorSentence = useErrorSentence();
  const viewer = useQuery(trpc.question.viewer.queryOptions({ id: questionId }, { retry: false }));
  const signedIn = Boolean(viewer.data);
  const viaToken = viewer.data?.viaLink ?? false;
  const query = useQuery(
    trpc.question.get.queryOptions(
      { id: questionId },
      {
        enabled: signedIn,
        // Link pages poll while pending; any page re-reads a pending question whose time is up
        // until the server's expiry sweep has settled it.
        refetchInterval: (q) => {
          const r = q.state.data?.question;
          if (r?.status !== "pending") return false;
          return viaToken || Date.now() >= r.expiresAtMs ? 2000 : false;
        },
      },
    ),
  );
  const pending = query.data?.question.status === "pending";
  const { live } = useLiveChanges(signedIn && !viaToken && pending);

  let content: ReactNode;
  if (viewer.error) {
    content =
      trpcErrorCode(viewer.error) === "UNAUTHORIZED" ? (
        <SignInPrompt questionId={questionId} viaToken={linkRefused} />
      ) : (
        <p role="alert" className="error-box">
          {errorSentence(viewer.error, "load")}
        </p>
      );
  } else if (query.error) {
    content =
      trpcErrorCode(query.error) === "NOT_FOUND" ? (
        <section className="card answer-card" aria-labelledby="missing-title" data-testid="question-missing">
          <h1 id="missing-title">{t("missingTitle")}</h1>
          <p>{t.rich("missingText", { id: questionId, code: (chunks) => <code>{chunks}</code> })}</p>
        </section>
      ) : (
        <p role="alert" className="error-box">
          {errorSentence(query.error, "load")}
        </p>
      );
  } else if (!query.data) {
    content = (
      <DetailSkeleton label={common("loading")} />
    );
  } else {
    content = <QuestionCard record={query.data.question} viaToken={viaToken} live={viaToken ? null : live} readOnly={viewer.data?.role === "auditor"} answererId={viewer.data?.userId ?? null} />;
  }
  return (
    <Frame who={viewer.data ? personLabel(viewer.data) : null} viaToken={viaToken}>
      {content}
    </Frame>
  );
}

type TAnswerTranslator = ReturnType<typeof useTranslations<"answer">>;

function titleOf(r: TRecord, t: TAnswerTranslator): string {
  const shapes = new Set(r.questions.map(shapeOf));
  if (r.questions.length === 1 && shapes.has("url")) return t("titleUrl");
  if (r.questions.length === 1 && shapes.has("secret")) return t("titleSecret");
  if (r.questions.length === 1 && shapes.has("form")) return t("titleForm");
  return r.questions.length > 1 ? t("titleMany", { n: r.questions.length }) : t("titleOne");
}

function lostText(r: TRecord, t: TAnswerTranslator): string {
  const name = r.answeredBy?.name || r.answeredBy?.email ? personLabel(r.answeredBy) : t("someoneElse");
  if (r.status === "answered") return t("lostAnswered", { name });
  if (r.status === "cancelled") return r.answeredVia === "system" ? t("lostCancelledBySystem") : t("lostDeclined", { name });
  return t("lostExpired");
}

function QuestionCard({ record, viaToken, live, readOnly, answererId }: { record: TRecord; viaToken: boolean; live: boolean | null; readOnly: boolean; answererId: string | null }) {
  const t = useTranslations("answer");
  const tq = useTranslations("question");
  const now = useNow(1000);
  const [sent, setSent] = useState<"answered" | "declined" | null>(null);
  const [lost, setLost] = useState<TLostRace | null>(null);
  const outcomeRef = useRef<HTMLHeadingElement>(null);
  // What the server knows, or what we learned from a failed submission before the refetch lands.
  const current = record.status === "pending" && lost ? lost.record : record;
  const timeUp = current.status === "pending" && current.expiresAtMs <= now;
  const shown: TRecord = timeUp ? { ...current, status: "expired" } : current;
  const open = shown.status === "pending";

  // When the question closes while the page is open, move focus to the outcome.
  const wasOpen = useRef(open);
  useEffect(() => {
    if (wasOpen.current && !open) outcomeRef.current?.focus();
    wasOpen.current = open;
  }, [open]);

  return (
    <article className="card answer-card" aria-labelledby="answer-title" data-testid="answer-card" data-question-id={record.id} data-status={shown.status}>
      <div className="answer-head">
        <span className="badge tone-info kind-badge" data-testid="question-kind">
          {kindLabel(record.questions, tq)}
        </span>
        {open ? (
          <span className="answer-timing">
            <span className="time-left">
              <Countdown iso={record.expiresAt} />
            </span>
            {live !== null ? <LiveIndicator live={live} /> : null}
          </span>
        ) : null}
      </div>
      <h1 id="answer-title">{titleOf(record, t)}</h1>
      <p className="muted small answer-meta">
        {t.rich("askedBy", { name: recordPerson(record.requester), strong: (chunks) => <strong>{chunks}</strong> })} · <TimeAgo iso={record.createdAt} />
        {record.responseId && !viaToken ? (
          <>
            {" "}
            · <Link href={`/responses/${record.responseId}`}>{t("viewResponse")}</Link>
          </>
        ) : null}
      </p>
      <QuestionContext questionId={record.id} />

      {lost ? (
        <p role="alert" className="notice notice-race" data-testid="race-notice">
          {lostText(lost.record, t)}
        </p>
      ) : sent && !open ? (
        <p role="status" className="notice notice-sent" data-testid="sent-notice">
          {sent === "declined" ? t("sentDeclined") : t("sentAnswered")}
        </p>
      ) : null}

      {open && !readOnly && answererId && answererId !== record.requester.userId ? (
        <p className="notice" data-testid="answering-on-behalf">
          {t.rich("onBehalf", { name: recordPerson(record.requester), strong: (chunks) => <strong>{chunks}</strong> })}
        </p>
      ) : null}
      {open && readOnly ? (
        <p className="notice" data-testid="read-only">
          {t("readOnly")}
        </p>
      ) : null}
      {open ? (
        <AnswerForm record={record} closed={timeUp || readOnly} onAnswered={setSent} onLostRace={setLost} />
      ) : (
        <QuestionOutcome ref={outcomeRef} record={shown} />
      )}
    </article>
  );
}
