"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { useEffect, useRef, useState } from "react";
import { useTRPC } from "./trpc-provider";
import { useErrorSentence } from "./use-error-sentence";

/** Cancels a running or waiting response, after an inline confirmation. */
export function CancelButton({ responseId }: { responseId: string }) {
  const trpc = useTRPC();
  const errorText = useErrorSentence();
  const t = useTranslations("cancel");
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
          <span>{t("prompt")}</span>
          <button type="button" className="btn btn-deny" onClick={() => cancel.mutate({ responseId })} disabled={cancel.isPending}>
            {t("confirm")}
          </button>
          <button ref={keepButton} type="button" className="btn btn-quiet" onClick={() => setConfirming(false)} disabled={cancel.isPending}>
            {t("keep")}
          </button>
        </>
      ) : (
        <button ref={cancelButton} type="button" className="btn btn-outline-bad" onClick={() => setConfirming(true)}>
          {t("button")}
        </button>
      )}
      {cancel.error ? (
        <p role="alert" className="error-box">
          {errorText(cancel.error, "change")}
        </p>
      ) : null}
    </div>
  );
}
