"use client";

import { skipToken, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useTranslations } from "next-intl";
import { useTRPC } from "./trpc-provider";

/**
 * Follows the console's activity feed (`console.onActivity`: durable event ids, replayed after a
 * reconnect, scoped to what the viewer may read) and refetches approvals, responses and questions
 * on every message, including the `sync` each first connect starts with, so nothing missed while
 * offline is lost. The feed also fires when a question is asked, answered, cancelled or expires.
 */
export function useLiveChanges(enabled = true): { live: boolean } {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const sub = useSubscription(
    trpc.console.onActivity.subscriptionOptions(enabled ? {} : skipToken, {
      onData: () => {
        void queryClient.invalidateQueries(trpc.approvals.pathFilter());
        void queryClient.invalidateQueries(trpc.responses.pathFilter());
        void queryClient.invalidateQueries(trpc.question.pathFilter());
      },
    }),
  );
  return { live: enabled && sub.status === "pending" };
}

/** "Live" / "Connecting…" pill for pages that update by themselves. */
export function LiveIndicator({ live }: { live: boolean }) {
  const t = useTranslations("common");
  return (
    <span className={`live ${live ? "on" : "off"}`} data-testid="live-indicator" role="status">
      <span className="live-dot" aria-hidden="true" />
      {live ? t("live") : t("connecting")}
    </span>
  );
}
