"use client";

import { skipToken, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useEffect, useRef, useState } from "react";
import { useTRPC } from "./trpc-provider";

/**
 * Follows `responses.onFrames` while a response is not terminal and refetches `responses.get`
 * as frames arrive (coalesced), so an open page tracks a run until it ends.
 */
export function useResponseLive(responseId: string, active: boolean, lastFrameSeq: number | null | undefined): { live: boolean } {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // Start after the frames the first load already showed; tRPC tracks the position on reconnects.
  const [startAfter, setStartAfter] = useState<number | null | undefined>(undefined);
  useEffect(() => {
    if (startAfter === undefined && lastFrameSeq !== undefined) setStartAfter(lastFrameSeq);
  }, [startAfter, lastFrameSeq]);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);

  const refetch = () => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      void queryClient.invalidateQueries({ queryKey: trpc.responses.get.queryKey({ responseId }) });
    }, 150);
  };

  const ready = active && startAfter !== undefined;
  const sub = useSubscription(
    trpc.responses.onFrames.subscriptionOptions(
      ready ? { responseId, lastEventId: startAfter === null ? null : String(startAfter) } : skipToken,
      { onData: refetch },
    ),
  );
  return { live: ready && sub.status === "pending" };
}
