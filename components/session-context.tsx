"use client";

import { skipToken, useQuery } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { useState } from "react";
import { useTRPC } from "./trpc-provider";
import { useErrorSentence } from "./use-error-sentence";

/** Each role's class on a turn, spelled out whole (scripts/css-selectors.test.ts finds each class in the source). */
const TURN_CLASS: Record<string, string> = { user: "turn-user", assistant: "turn-assistant", tool: "turn-tool", result: "turn-result" };

/** The session's last turns, loaded when opened. */
export function SessionContext({ approvalId }: { approvalId: string }) {
  const trpc = useTRPC();
  const t = useTranslations("sessionContext");
  const common = useTranslations("common");
  const errorSentence = useErrorSentence();
  const [open, setOpen] = useState(false);
  const context = useQuery(trpc.inbox.context.queryOptions(open ? { approvalId } : skipToken, { staleTime: 30_000 }));
  return (
    <details className="session-context" onToggle={(e) => setOpen(e.currentTarget.open)} data-testid="session-context">
      <summary className="context-summary">{t("summary")}</summary>
      {context.isPending && open ? <p className="muted small">{common("loading")}</p> : null}
      {context.error ? <p className="error-box">{errorSentence(context.error, "load")}</p> : null}
      {context.data && context.data.length === 0 ? <p className="muted small">{t("none")}</p> : null}
      {context.data && context.data.length > 0 ? (
        <ol className="turns">
          {context.data.map((turn, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a fixed, ordered snapshot
            <li key={i} className={`turn ${TURN_CLASS[turn.role] ?? ""}`}>
              <span className="turn-role">{turn.role === "user" ? t("user") : turn.role === "assistant" ? t("agent") : turn.role === "tool" ? t("toolCall") : t("toolResult")}</span>
              <span className="turn-text">{turn.text}</span>
            </li>
          ))}
        </ol>
      ) : null}
    </details>
  );
}
