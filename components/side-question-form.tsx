"use client";

import { useMutation } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { useState } from "react";
import { TextSendForm } from "./text-send-form";
import { useTRPC } from "./trpc-provider";

/**
 * Asks the response's harness a side question (`responses.askSideQuestion`): answered beside the
 * run from its transcript, without steering it. The answers asked here are listed below the box
 * (all of them are in the trajectory as `side_question.answered`).
 */
export function SideQuestionForm({ responseId }: { responseId: string }) {
  const trpc = useTRPC();
  const t = useTranslations("sideQuestion");
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
  return (
    <TextSendForm
      testId="side-question-form"
      label={t("label")}
      hint={t("hint")}
      placeholder={t("placeholder")}
      value={question}
      onChange={setQuestion}
      onSend={(text) => ask.mutate({ responseId, question: text })}
      pending={ask.isPending}
      sendLabel={t("ask")}
      pendingLabel={t("asking")}
      error={ask.error}
    >
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
    </TextSendForm>
  );
}
