"use client";

import { useMutation } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { useState } from "react";
import { TextSendForm } from "./text-send-form";
import { useTRPC } from "./trpc-provider";

/** Sends a steering message to a running or waiting response (`responses.steer`); used at its next model turn. */
export function SteerForm({ responseId }: { responseId: string }) {
  const trpc = useTRPC();
  const t = useTranslations("steer");
  const [text, setText] = useState("");
  const [sent, setSent] = useState<string | null>(null);
  const steer = useMutation(
    trpc.responses.steer.mutationOptions({
      onSuccess: (_data, input) => {
        setSent(input.text);
        setText("");
      },
    }),
  );
  return (
    <TextSendForm
      testId="steer-form"
      label={t("label")}
      hint={t("hint")}
      placeholder={t("placeholder")}
      value={text}
      onChange={setText}
      onSend={(message) => {
        setSent(null);
        steer.mutate({ responseId, text: message });
      }}
      pending={steer.isPending}
      sendLabel={t("send")}
      pendingLabel={t("sending")}
      primary
      error={steer.error}
    >
      {sent ? (
        <p className="notice notice-sent small" role="status" data-testid="steer-sent">
          {t("queued", { text: sent.length > 120 ? `${sent.slice(0, 120)}…` : sent })}
        </p>
      ) : null}
    </TextSendForm>
  );
}
