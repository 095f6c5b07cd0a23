"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { type FormEvent, type KeyboardEvent, useId, useRef, useState } from "react";
import type { TQuestionRecordView as TRecord } from "./api-types";
import { QuestionInput } from "./question-inputs";
import { buildAnswers, checkDrafts, initialDrafts, shapeOf, type TDraft, URL_CONFIRM, URL_DECLINE } from "./question-model";
import { trpcErrorCode, trpcReason, useTRPC } from "./trpc-provider";
import { useErrorSentence } from "./use-error-sentence";

/** A fresh receipt per submission (crypto.randomUUID needs a secure context; fall back to random bytes). */
function freshResolutionId(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

/** Outcome of a submission the page must show once the record is re-read. */
export type TLostRace = { record: TRecord };

type TProps = {
  record: TRecord;
  /** Disabled from outside (the countdown reached zero). */
  closed: boolean;
  onAnswered: (kind: "answered" | "declined") => void;
  /** Someone else settled the question first; `record` is its final state. */
  onLostRace: (lost: TLostRace) => void;
};

/**
 * The answer form for a pending question record: every question's inputs, client-side checks
 * with inline messages (the server stays the authority), Send / Decline, Enter to send.
 */
export function AnswerForm({ record, closed, onAnswered, onLostRace }: TProps) {
  const trpc = useTRPC();
  const t = useTranslations("form");
  const tq = useTranslations("question");
  const errorSentence = useErrorSentence();
  const queryClient = useQueryClient();
  const prefix = useId().replace(/[^a-zA-Z0-9_-]/g, "");
  const formRef = useRef<HTMLFormElement>(null);
  const [drafts, setDrafts] = useState<Record<string, TDraft>>(() => initialDrafts(record.questions));
  const [checked, setChecked] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const questions = record.questions;
  const errors = checked ? checkDrafts(questions, drafts, tq) : {};
  const errorCount = Object.keys(errors).length;
  const onlyUrl = questions.length === 1 && shapeOf(questions[0] as (typeof questions)[number]) === "url";
  const isForm = questions.length === 1 && shapeOf(questions[0] as (typeof questions)[number]) === "form";
  const getKey = trpc.question.get.queryKey({ id: record.id });

  /** Forgets what was typed (secrets above all) once the question is settled either way. */
  const forget = () => {
    setDrafts(initialDrafts(record.questions));
    setChecked(false);
  };

  const resolve = useMutation(
    trpc.question.resolve.mutationOptions({
      // The variables may hold a secret: keep no settled mutation around in the cache.
      gcTime: 0,
      onSuccess: async (result) => {
        forget();
        onAnswered(result.status === "cancelled" ? "declined" : "answered");
        await queryClient.invalidateQueries({ queryKey: getKey });
      },
      onError: async (error) => {
        const { reason } = trpcReason(error);
        // A lost race can surface as ALREADY_TERMINAL, or as REQUESTER_INACTIVE when the winner
        // already resumed the run: re-read the record and show its final state either way.
        if (reason === "QUESTION_ALREADY_TERMINAL" || reason === "QUESTION_REQUESTER_INACTIVE" || reason === "QUESTION_NOT_FOUND") {
          const fresh = await queryClient.fetchQuery(trpc.question.get.queryOptions({ id: record.id }, { staleTime: 0 })).catch(() => null);
          if (fresh && fresh.question.status !== "pending") {
            forget();
            onLostRace({ record: fresh.question });
            return;
          }
        }
        if (reason === "QUESTION_INVALID_ANSWER") setFailure(errorSentence(error, "answer"));
        else if (reason === "QUESTION_REQUESTER_INACTIVE") setFailure(t("requesterGone"));
        else if (trpcErrorCode(error) === "FORBIDDEN") setFailure(t("forbidden"));
        else setFailure(errorSentence(error, "answer"));
      },
    }),
  );
  /** Sends, then drops the mutation's state (its variables) as soon as it settled. */
  const submit = (input: Parameters<typeof resolve.mutate>[0]) => resolve.mutate(input, { onSettled: () => resolve.reset() });
  const busy = resolve.isPending;
  const disabled = busy || closed;

  function send(override?: Record<string, TDraft>) {
    const current = override ?? drafts;
    setFailure(null);
    setChecked(true);
    const problems = checkDrafts(questions, current, tq);
    if (Object.keys(problems).length > 0) {
      requestAnimationFrame(() => formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
      return;
    }
    submit({ id: record.id, answers: buildAnswers(questions, current), resolutionId: freshResolutionId() });
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!disabled) send();
  }

  /** Enter sends from any field (Shift+Enter keeps a new line in text areas); buttons keep their own Enter. */
  function onKeyDown(event: KeyboardEvent<HTMLFormElement>) {
    if (event.key !== "Enter" || event.shiftKey || event.nativeEvent.isComposing) return;
    const target = event.target as HTMLElement;
    const tag = target.tagName;
    if (tag === "BUTTON" || tag === "A" || (tag === "INPUT" && ["button", "submit", "reset"].includes((target as HTMLInputElement).type))) return;
    if (tag !== "INPUT" && tag !== "TEXTAREA" && tag !== "SELECT") return;
    event.preventDefault();
    if (!disabled && !onlyUrl) send();
  }

  const setDraft = (id: string) => (next: TDraft) => setDrafts((d) => ({ ...d, [id]: next }));

  function answerUrl(value: typeof URL_CONFIRM | typeof URL_DECLINE) {
    const q = questions[0];
    if (!q) return;
    const next = { ...drafts, [q.questionId]: { ...(drafts[q.questionId] as TDraft), choice: [value] } };
    setDrafts(next);
    send(next);
  }

  return (
    <form ref={formRef} className="answer-form" onSubmit={onSubmit} onKeyDown={onKeyDown} noValidate aria-busy={busy || undefined} data-testid="answer-form">
      {questions.map((q, i) => (
        <QuestionInput
          key={q.questionId}
          q={q}
          draft={drafts[q.questionId] as TDraft}
          onChange={setDraft(q.questionId)}
          errors={errors}
          disabled={disabled}
          prefix={prefix}
          index={i}
          total={questions.length}
          urlButtons={onlyUrl}
        />
      ))}

      {failure ? (
        <p role="alert" className="error-box" data-testid="answer-error">
          {failure}
        </p>
      ) : null}
      <p className="visually-hidden" role="status">
        {errorCount > 0 ? t("needFixing", { n: errorCount }) : ""}
      </p>
      {errorCount > 0 ? (
        <p className="form-summary" aria-hidden="true">
          {t("fixHighlighted", { n: errorCount })}
        </p>
      ) : null}

      <div className="actions answer-actions">
        {onlyUrl ? (
          <>
            <button type="button" className="btn btn-approve" onClick={() => answerUrl(URL_CONFIRM)} disabled={disabled}>
              {t("confirm")}
            </button>
            <button type="button" className="btn btn-deny" onClick={() => answerUrl(URL_DECLINE)} disabled={disabled}>
              {t("decline")}
            </button>
          </>
        ) : (
          <>
            <button type="submit" className="btn btn-primary" disabled={disabled}>
              {isForm ? t("submit") : t("sendAnswer")}
            </button>
            <button
              type="button"
              className="btn btn-quiet"
              onClick={() => {
                setFailure(null);
                submit({ id: record.id, cancel: true });
              }}
              disabled={disabled}
            >
              {isForm ? t("decline") : t("declineToAnswer")}
            </button>
          </>
        )}
        {busy ? (
          <span className="muted" aria-live="polite">
            {t("sending")}
          </span>
        ) : null}
      </div>
    </form>
  );
}
