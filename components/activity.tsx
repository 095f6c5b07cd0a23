"use client";

import { skipToken, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { createContext, type ReactNode, useContext, useEffect, useRef, useState } from "react";
import type { TActivityEvent } from "./api-types";
import { useTRPC } from "./trpc-provider";

type TActivity = { live: boolean; events: TActivityEvent[] };

const ActivityContext = createContext<TActivity>({ live: false, events: [] });

/** The last event id this tab saw; a re-mounted feed resumes from it instead of starting over. */
let lastSeenEventId: string | null = null;
const KEEP = 60;

/**
 * One live activity feed for the whole console (`console.onActivity`). Every message refetches
 * what is waiting, the inbox, questions and the lists (coalesced); events are kept for the home
 * page's activity panel. tRPC passes the last tracked id back on every reconnect, and the server
 * replays what was missed, so nothing goes stale after a network drop or a sleeping laptop.
 */
export function ActivityProvider({ enabled, children }: { enabled: boolean; children: ReactNode }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [events, setEvents] = useState<TActivityEvent[]>([]);
  const [resumeFrom] = useState(() => lastSeenEventId);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);

  const refresh = () => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      for (const filter of [
        trpc.console.waiting.pathFilter(),
        trpc.inbox.list.pathFilter(),
        trpc.approvals.pathFilter(),
        trpc.question.pathFilter(),
        trpc.responses.list.pathFilter(),
        trpc.audit.responses.pathFilter(),
        trpc.audit.sessions.pathFilter(),
        trpc.audit.session.pathFilter(),
        trpc.audit.response.pathFilter(),
      ]) {
        void queryClient.invalidateQueries(filter);
      }
    }, 200);
  };

  const sub = useSubscription(
    trpc.console.onActivity.subscriptionOptions(enabled ? { lastEventId: resumeFrom } : skipToken, {
      onData: (message) => {
        lastSeenEventId = message.id;
        const data = message.data;
        if (data.kind === "event") {
          const { kind: _, ...event } = data;
          setEvents((prev) => (prev.some((e) => e.id === event.id) ? prev : [event, ...prev].sort((a, b) => b.id - a.id).slice(0, KEEP)));
        }
        refresh();
      },
    }),
  );
  return <ActivityContext.Provider value={{ live: enabled && sub.status === "pending", events }}>{children}</ActivityContext.Provider>;
}

/** The console's live state and its recent activity events (newest first). */
export const useActivity = (): TActivity => useContext(ActivityContext);
