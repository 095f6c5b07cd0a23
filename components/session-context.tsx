"use client";

import { skipToken, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { errorSentence } from "./error-sentence";
import { useTRPC } from "./trpc-provider";

/** The session's last turns, loaded when opened. */
export function SessionContext({ approvalId }: { approvalId: string }) {
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const context = useQuery(trpc.inbox.context.queryOptions(open ? { approvalId } : skipToken, { staleTime: 30_000 }));
  return (
    <details className="session-context" onToggle={(e) => setOpen(e.currentTarget.open)} data-testid="session-context">
      <summary className="context-summary">Session context (last turns)</summary>
      {context.isPending && open ? <p className="muted small">Loading…</p> : null}
      {context.error ? <p className="error-box">{errorSentence(context.error, "load")}</p> : null}
      {context.data && context.data.length === 0 ? <p className="muted small">No earlier turns in this session.</p> : null}
      {context.data && context.data.length > 0 ? (
        <ol className="turns">
          {context.data.map((t, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a fixed, ordered snapshot
            <li key={i} className={`turn turn-${t.role}`}>
              <span className="turn-role">{t.role === "user" ? "User" : t.role === "assistant" ? "Agent" : t.role === "tool" ? "Tool call" : "Tool result"}</span>
              <span className="turn-text">{t.text}</span>
            </li>
          ))}
        </ol>
      ) : null}
    </details>
  );
}
