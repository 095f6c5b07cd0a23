"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "./trpc-provider";

/**
 * Who is asking and why, above a question: the agent, the task its run was given and the run's
 * last assistant message (the server leaves out what this person may not read).
 */
export function QuestionContext({ questionId }: { questionId: string }) {
  const trpc = useTRPC();
  const context = useQuery(trpc.question.context.queryOptions({ id: questionId }, { staleTime: 30_000, retry: false }));
  const c = context.data;
  if (!c?.agent) return null;
  return (
    <section className="ask-context" aria-label="Who is asking" data-testid="question-context">
      <p className="small">
        Asked by the agent <strong data-testid="context-agent">{c.agent}</strong>
        {c.task ? (
          <>
            {" "}
            working on: <span data-testid="context-task">{c.task}</span>
          </>
        ) : null}
      </p>
      {c.lastMessage ? (
        <blockquote className="ask-last prose" data-testid="context-last-message">
          <span className="label">The agent's last message</span>
          {c.lastMessage}
        </blockquote>
      ) : null}
    </section>
  );
}
