"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useTRPC } from "./trpc-provider";

/**
 * Subscribes to `approvals.onChange` and refetches approvals and responses on every event
 * (including the `ready` event sent on each (re)connect, so nothing missed while offline is lost).
 */
export function useLiveChanges(): { live: boolean } {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const sub = useSubscription(
    trpc.approvals.onChange.subscriptionOptions(undefined, {
      onData: () => {
        void queryClient.invalidateQueries(trpc.approvals.pathFilter());
        void queryClient.invalidateQueries(trpc.responses.pathFilter());
      },
    }),
  );
  return { live: sub.status === "pending" };
}

/** "Live" / "Connecting…" pill for pages that update by themselves. */
export function LiveIndicator({ live }: { live: boolean }) {
  return (
    <span className={`live ${live ? "on" : "off"}`} data-testid="live-indicator" role="status">
      <span className="live-dot" aria-hidden="true" />
      {live ? "Live" : "Connecting…"}
    </span>
  );
}
