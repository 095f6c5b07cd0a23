"use client";

import { skipToken, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useTranslations } from "next-intl";
import { useTRPC } from "./trpc-provider";

/**
 * Subscribes to `approvals.onChange` and refetches approvals, responses and questions on every
 * event (including the `ready` event sent on each (re)connect, so nothing missed while offline is
 * lost). The feed also fires when a question is asked, answered, cancelled or expires.
 */
export function useLiveChanges(enabled = true): { live: boolean } {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const sub = useSubscription(
    trpc.approvals.onChange.subscriptionOptions(enabled ? undefined : skipToken, {
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
