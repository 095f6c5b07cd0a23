"use client";

import { skipToken, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useEffect, useRef, useState } from "react";
import { useTRPC } from "./trpc-provider";

/** One line of a run's live output, in frame order. */
export type TStreamEntry = { key: string; kind: "text" | "thinking" | "tool" | "result" | "wait" | "steer" | "end"; text: string };

const MAX_ENTRIES = 2000;
const MAX_TEXT = 20_000;

type TFrame = { type: string; sequence: number; [key: string]: unknown };

const s = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));

/** Folds one frame into the stream: deltas extend their item's line, other frames add a line. */
function fold(entries: TStreamEntry[], f: TFrame): TStreamEntry[] {
  const last = entries[entries.length - 1];
  if (f.type === "response.text.delta" || f.type === "response.thinking.delta") {
    const kind = f.type === "response.text.delta" ? "text" : "thinking";
    const key = `${kind}:${s(f.itemId)}`;
    if (last && last.key === key) {
      const text = (last.text + s(f.delta)).slice(-MAX_TEXT);
      return [...entries.slice(0, -1), { ...last, text }];
    }
    return [...entries, { key, kind, text: s(f.delta) }];
  }
  const line = (kind: TStreamEntry["kind"], text: string) => [...entries, { key: `${f.type}:${f.sequence}`, kind, text }];
  switch (f.type) {
    case "response.tool_call":
      return line("tool", `▸ ${s(f.name)} ${s(f.arguments)}`);
    case "response.tool_result": {
      const out = f.output as Record<string, unknown> | undefined;
      const text = out && typeof out === "object" && "exitCode" in out ? `exit ${s(out.exitCode)}${out.stdout ? `\n${s(out.stdout)}` : ""}${out.stderr ? `\n${s(out.stderr)}` : ""}` : s(f.output);
      return line("result", `◂ ${s(f.name)}: ${text.slice(0, 4000)}`);
    }
    case "approval.requested":
      return line("wait", "… waiting for a person to approve");
    case "approval.resolved":
      return line("wait", `▶ approval ${f.decision === "approve" ? "approved" : "denied"}`);
    case "question.requested":
      return line("wait", "… waiting for an answer");
    case "question.resolved":
      return line("wait", "▶ question settled");
    case "client_tool.requested":
      return line("wait", "… waiting for the client to run a tool");
    case "steer.queued":
      return line("steer", "✉ steering message queued");
    case "steer.committed":
      return line("steer", "✉ steering message delivered to the model");
    case "response.completed":
      return f.status === "requires_action" ? entries : line("end", `■ ${s(f.status).replace("_", " ")}`);
    default:
      return entries;
  }
}

/**
 * Follows a response's frames live (from its first frame, so the output so far is replayed) while
 * it is not terminal. tRPC tracks the last frame sequence and resumes after it on reconnects.
 * Returns the folded stream and a tick that changes whenever new frames arrived (coalesced).
 */
export function useResponseStream(responseId: string, active: boolean): { live: boolean; entries: TStreamEntry[]; tick: number } {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [entries, setEntries] = useState<TStreamEntry[]>([]);
  const [tick, setTick] = useState(0);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const seen = useRef(-1);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);

  const bump = () => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      setTick((t) => t + 1);
      void queryClient.invalidateQueries({ queryKey: trpc.audit.response.queryKey({ responseId }) });
    }, 150);
  };

  const sub = useSubscription(
    trpc.responses.onFrames.subscriptionOptions(active ? { responseId, lastEventId: null } : skipToken, {
      onData: (message) => {
        const frame = message.data as TFrame;
        if (frame.sequence <= seen.current) return;
        seen.current = frame.sequence;
        setEntries((prev) => {
          const next = fold(prev, frame);
          return next.length > MAX_ENTRIES ? next.slice(-MAX_ENTRIES) : next;
        });
        bump();
      },
    }),
  );
  return { live: active && sub.status === "pending", entries, tick };
}
