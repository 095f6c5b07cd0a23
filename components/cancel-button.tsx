"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { useTRPC } from "./trpc-provider";

/** Cancels a running or waiting response, after an inline confirmation. */
export function CancelButton({ responseId }: { responseId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const keepButton = useRef<HTMLButtonElement>(null);
  const cancelButton = useRef<HTMLButtonElement>(null);
  const wasConfirming = useRef(false);
  // Keep keyboard focus on a safe control when the buttons swap.
  useEffect(() => {
    if (confirming) keepButton.current?.focus();
    else if (wasConfirming.current) cancelButton.current?.focus();
    wasConfirming.current = confirming;
  }, [confirming]);
  const cancel = useMutation(
    trpc.responses.cancel.mutationOptions({
      onSettled: () => {
        setConfirming(false);
        void queryClient.invalidateQueries(trpc.responses.pathFilter());
        void queryClient.invalidateQueries(trpc.approvals.pathFilter());
      },
    }),
  );
  return (
    <div className="cancel">
      {confirming ? (
        <>
          <span>Stop this response? Any pending approval is cancelled.</span>
          <button type="button" className="btn btn-deny" onClick={() => cancel.mutate({ responseId })} disabled={cancel.isPending}>
            Yes, cancel it
          </button>
          <button ref={keepButton} type="button" className="btn btn-quiet" onClick={() => setConfirming(false)} disabled={cancel.isPending}>
            Keep running
          </button>
        </>
      ) : (
        <button ref={cancelButton} type="button" className="btn btn-outline-bad" onClick={() => setConfirming(true)}>
          Cancel response
        </button>
      )}
      {cancel.error ? (
        <p role="alert" className="error-box">
          {cancel.error.message}
        </p>
      ) : null}
    </div>
  );
}
