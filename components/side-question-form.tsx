"use client";

import { useMutation } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { type FormEvent, useId, useState } from "react";
import { useTRPC } from "./trpc-provider";

/**
 * Asks the response's harness a side question (`responses.askSideQuestion`): answered beside the
 * run from its transcript, without steering it. The answers asked here are listed below the box
 * (all of them are in the trajectory as `side_question.answered`).
 */
export function SideQuestionForm({ responseId }: { responseId: string }) {
  const trpc = useTRPC();
  const t = useTranslations("sideQuestion");
  const id = useId();
  const [question, setQuestion] = useState("");
  const [answers, setAnswers] = useState<Array<{ id: string; question: string; answer: string }>>([]);
  const ask = useMutation(
    trpc.responses.askSideQuestion.mutationOptions({
      onSuccess: (answered) => {
        setAnswers((list) => [...list, answered]);
        setQuestion("");
      },
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!question.trim()) return;
    ask.mutate({ responseId, question: question.trim() });
  };
  return (
    <form className="card steer-form" onSubmit={submit} data-testid="side-question-form">
      <label htmlFor={id}>
        <strong>{t("label")}</strong> <span className="muted small">{t("hint")}</span>
      </label>
      <div className="steer-row">
        <textarea
          id={id}
          className="input"
          rows={2}
          maxLength={10_000}
          value={question}
          onChange={(e) => setQuestion(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) submit(e);
          }}
          placeholder={t("placeholder")}
        />
        <button type="submit" className="btn" disabled={ask.isPending || !question.trim()}>
          {ask.isPending ? t("asking") : t("ask")}
        </button>
      </div>
      {answers.length > 0 ? (
        <dl className="small" data-testid="side-question-answers">
          {answers.map((a) => (
            <div key={a.id}>
              <dt>{a.question}</dt>
              <dd>{a.answer}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      {ask.error ? (
        <p role="alert" className="error-box">
          {ask.error.message}
        </p>
      ) : null}
    </form>
  );
}
