"use client";

import { useQuery } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { RunFiles } from "./output-items";
import { useTRPC } from "./trpc-provider";

/**
 * Who is asking and why, above a question: the agent, the task its run was given and the run's
 * last assistant message, and the files the run was given or attached so far (the server leaves
 * out what this person may not read, and serves the files to this page's reader only).
 */
export function QuestionContext({ questionId }: { questionId: string }) {
  const trpc = useTRPC();
  const t = useTranslations("answer");
  const context = useQuery(trpc.question.context.queryOptions({ id: questionId }, { staleTime: 30_000, retry: false }));
  const c = context.data;
  if (!c?.agent) return null;
  return (
    <section className="ask-context" aria-label={t("contextLabel")} data-testid="question-context">
      <p className="small">
        {t.rich("contextAgent", { agent: c.agent, strong: (chunks) => <strong data-testid="context-agent">{chunks}</strong> })}
        {c.task ? (
          <>
            {t("contextTask")}
            <span data-testid="context-task">{c.task}</span>
          </>
        ) : null}
      </p>
      {c.lastMessage ? (
        <blockquote className="ask-last prose" data-testid="context-last-message">
          <span className="label">{t("contextLastMessage")}</span>
          {c.lastMessage}
        </blockquote>
      ) : null}
      <RunFiles files={c.files} />
    </section>
  );
}
