"use client";

import { useMutation } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { type FormEvent, useId, useState } from "react";
import { useTRPC } from "./trpc-provider";

/** Sends a steering message to a running or waiting response (`responses.steer`); used at its next model turn. */
export function SteerForm({ responseId }: { responseId: string }) {
  const trpc = useTRPC();
  const t = useTranslations("steer");
  const id = useId();
  const [text, setText] = useState("");
  const [sent, setSent] = useState<string | null>(null);
  const steer = useMutation(
    trpc.responses.steer.mutationOptions({
      onSuccess: () => {
        setSent(text.trim());
        setText("");
      },
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!text.trim()) return;
    setSent(null);
    steer.mutate({ responseId, text: text.trim() });
  };
  return (
    <form className="card steer-form" onSubmit={submit} data-testid="steer-form">
      <label htmlFor={id}>
        <strong>{t("label")}</strong> <span className="muted small">{t("hint")}</span>
      </label>
      <div className="steer-row">
        <textarea
          id={id}
          className="input"
          rows={2}
          maxLength={10_000}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) submit(e);
          }}
          placeholder={t("placeholder")}
        />
        <button type="submit" className="btn btn-primary" disabled={steer.isPending || !text.trim()}>
          {steer.isPending ? t("sending") : t("send")}
        </button>
      </div>
      {sent ? (
        <p className="notice notice-sent small" role="status" data-testid="steer-sent">
          {t("queued", { text: sent.length > 120 ? `${sent.slice(0, 120)}…` : sent })}
        </p>
      ) : null}
      {steer.error ? (
        <p role="alert" className="error-box">
          {steer.error.message}
        </p>
      ) : null}
    </form>
  );
}
