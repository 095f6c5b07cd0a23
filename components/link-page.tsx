"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTranslations } from "next-intl";
import { type FormEvent, type ReactNode, useId, useState } from "react";
import type { TQuestionView } from "./api-types";
import { OperationArgs } from "./operation-view";
import { abbreviateIn, useArgsWords } from "./args-view";
import { RiskBadge, StatusBadge } from "./badges";
import { useServerText } from "./list-kit/labels";
import { QuestionInput } from "./question-inputs";
import { buildAnswers, checkDrafts, initialDrafts, type TDraft } from "./question-model";
import { Countdown } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { useErrorSentence } from "./use-error-sentence";
import { DetailSkeleton } from "./detail-skeleton";
import { personLabel } from "./person";

/**
 * The page behind a single-use link from an email: shows the approval or question the link is
 * for and lets its recipient decide or answer once, without signing in. Any failure points to
 * the login, where the console shows the same item.
 */
export function LinkPage({ token }: { token: string }) {
  const trpc = useTRPC();
  const t = useTranslations("link");
  const common = useTranslations("common");
  const errorSentence = useErrorSentence();
  // Link previews and reloads must not use the link up: `get` only reads.
  const view = useQuery(trpc.link.get.queryOptions({ token }, { retry: false, refetchOnWindowFocus: false, staleTime: Number.POSITIVE_INFINITY }));
  const [done, setDone] = useState<string | null>(null);
  let content: ReactNode;
  if (done) content = <Outcome title={t("done")} text={done} />;
  else if (view.error) content = <Outcome title={t("broken")} text={errorSentence(view.error, "link")} failed />;
  else if (!view.data) content = <DetailSkeleton label={common("loading")} />;
  else {
    const { subject, recipient, linkExpiresAt } = view.data;
    content = (
      <article className="card answer-card" data-testid="link-card" data-kind={subject.kind} data-status={subject.status}>
        <p className="muted small">
          {t.rich("forRecipient", { name: personLabel(recipient), strong: (chunks) => <strong data-testid="link-recipient">{chunks}</strong> })}
          <Countdown iso={linkExpiresAt} />
        </p>
        {subject.status !== "pending" ? (
          <>
            <h1>{t("settledTitle")}</h1>
            <p>
              {t("settledBefore", { kind: subject.kind })}
              <StatusBadge status={subject.status} />
              {t("settledAfter")}
            </p>
          </>
        ) : subject.kind === "approval" ? (
          <ApprovalDecision token={token} subject={subject} onDone={setDone} />
        ) : (
          <QuestionAnswer token={token} questions={subject.questions as TQuestionView[]} onDone={setDone} />
        )}
      </article>
    );
  }
  return (
    <>
      <header className="topbar">
        <div className="topbar-inner answer-topbar">
          <span className="brand">
            <span className="brand-mark" aria-hidden="true">
              ✓
            </span>
            Countersign
          </span>
        </div>
      </header>
      <main id="main" className="answer-main">
        {content}
      </main>
    </>
  );
}

function Outcome({ title, text, failed = false }: { title: string; text: string; failed?: boolean }) {
  const common = useTranslations("common");
  return (
    <section className="card answer-card" data-testid="link-outcome" data-failed={failed || undefined}>
      <h1>{title}</h1>
      <p role={failed ? "alert" : "status"}>{text}</p>
      <p>
        <Link className="btn" href="/login">
          {common("signInToConsole")}
        </Link>
      </p>
    </section>
  );
}

type TApprovalSubject = { id: string; tool: string; action: string; risk: string; message: string; arguments?: unknown; expiresAt: string; agent: string | null; complete: boolean };

function ApprovalDecision({ token, subject, onDone }: { token: string; subject: TApprovalSubject; onDone: (text: string) => void }) {
  const trpc = useTRPC();
  const t = useTranslations("link");
  const common = useTranslations("common");
  const errorSentence = useErrorSentence();
  const words = useArgsWords();
  const serverText = useServerText();
  const [failure, setFailure] = useState<string | null>(null);
  const [reply, setReply] = useState("");
  const replyId = useId();
  const decide = useMutation(
    trpc.link.decide.mutationOptions({
      onSuccess: (r) =>
        onDone(
          !r.settled
            ? t("voteRecorded", { approvals: r.approvals, required: r.requiredApprovals })
            : r.decision === "approve"
              ? t("approved")
              : r.continues
                ? t("deniedWithReply")
                : t("denied"),
        ),
      onError: (error) => setFailure(errorSentence(error, "link")),
    }),
  );
  return (
    <>
      <h1>
        {t("approvalNeeded")} <RiskBadge risk={subject.risk} />
      </h1>
      <p data-testid="link-message">{abbreviateIn(serverText.summary(subject), subject.arguments, words)}</p>
      <dl className="small">
        <dt>{t("action")}</dt>
        <dd>
          <code>{subject.action}</code>
          {subject.agent ? t("agent", { agent: subject.agent }) : null}
        </dd>
        <dt>{t("expires")}</dt>
        <dd>
          <Countdown iso={subject.expiresAt} />
        </dd>
      </dl>
      <OperationArgs action={subject.action} value={subject.arguments} />
      {failure ? (
        <p role="alert" className="error-box">
          {failure} <Link href="/login">{common("signIn")}</Link>
        </p>
      ) : null}
      {/* Sticky, like the console's: Approve never scrolls away from what it approves. */}
      {subject.complete ? null : (
        <p className="notice" data-testid="link-incomplete">
          {t.rich("incomplete", { console: (c) => <Link href={`/approvals?focus=${encodeURIComponent(subject.id)}`}>{c}</Link> })}
        </p>
      )}
      <div className="actions decision-bar">
        {/* Approving needs the whole operation on the page: a cut one is approved in the console. */}
        {subject.complete ? (
          <button type="button" className="btn btn-approve" disabled={decide.isPending} onClick={() => decide.mutate({ token, decision: "approve" })}>
            {t("approve")}
          </button>
        ) : null}
        <button type="button" className="btn btn-deny" disabled={decide.isPending} onClick={() => decide.mutate({ token, decision: "deny" })}>
          {t("deny")}
        </button>
      </div>
      <div className="field">
        <label htmlFor={replyId}>{t("replyLabel")}</label>
        <textarea id={replyId} className="input" rows={2} maxLength={4000} value={reply} onChange={(e) => setReply(e.target.value)} placeholder={t("replyPlaceholder")} data-testid="link-reply" />
        <div className="actions">
          <button
            type="button"
            className="btn btn-deny"
            disabled={decide.isPending || reply.trim() === ""}
            onClick={() => decide.mutate({ token, decision: "deny", message: reply.trim() })}
            data-testid="link-deny-reply"
          >
            {t("denyAndReply")}
          </button>
        </div>
      </div>
    </>
  );
}

function QuestionAnswer({ token, questions, onDone }: { token: string; questions: TQuestionView[]; onDone: (text: string) => void }) {
  const trpc = useTRPC();
  const t = useTranslations("link");
  const ta = useTranslations("answer");
  const tf = useTranslations("form");
  const tq = useTranslations("question");
  const errorSentence = useErrorSentence();
  const prefix = useId().replace(/[^a-zA-Z0-9_-]/g, "");
  const [drafts, setDrafts] = useState<Record<string, TDraft>>(() => initialDrafts(questions));
  const [checked, setChecked] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const answer = useMutation(
    trpc.link.answer.mutationOptions({
      // The variables may hold a secret: keep no settled mutation in the cache.
      gcTime: 0,
      onSuccess: () => {
        setDrafts(initialDrafts(questions));
        onDone(t("answerSent"));
      },
      onError: (error) => setFailure(errorSentence(error, "link")),
    }),
  );
  const errors = checked ? checkDrafts(questions, drafts, tq) : {};
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setChecked(true);
    setFailure(null);
    if (Object.keys(checkDrafts(questions, drafts, tq)).length > 0) return;
    answer.mutate({ token, answers: buildAnswers(questions, drafts) }, { onSettled: () => answer.reset() });
  }
  return (
    <form className="answer-form" onSubmit={onSubmit} noValidate data-testid="link-answer-form">
      <h1>{questions.length > 1 ? ta("titleMany", { n: questions.length }) : ta("titleOne")}</h1>
      {questions.map((q, i) => (
        <QuestionInput
          key={q.questionId}
          q={q}
          draft={drafts[q.questionId] as TDraft}
          onChange={(next) => setDrafts((d) => ({ ...d, [q.questionId]: next }))}
          errors={errors}
          disabled={answer.isPending}
          prefix={prefix}
          index={i}
          total={questions.length}
          urlButtons={false}
        />
      ))}
      {failure ? (
        <p role="alert" className="error-box">
          {failure}
        </p>
      ) : null}
      <button type="submit" className="btn btn-primary" disabled={answer.isPending}>
        {tf("sendAnswer")}
      </button>
    </form>
  );
}
