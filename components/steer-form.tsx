"use client";

import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useId, useState } from "react";
import { useTRPC } from "./trpc-provider";

/** Sends a steering message to a running or waiting response (`responses.steer`); used at its next model turn. */
export function SteerForm({ responseId }: { responseId: string }) {
  const trpc = useTRPC();
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
        <strong>Steer this response</strong> <span className="muted small">— the agent reads it at its next model turn.</span>
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
          placeholder="e.g. Stop after the tests pass; do not deploy."
        />
        <button type="submit" className="btn btn-primary" disabled={steer.isPending || !text.trim()}>
          {steer.isPending ? "Sending…" : "Send to agent"}
        </button>
      </div>
      {sent ? (
        <p className="notice notice-sent small" role="status" data-testid="steer-sent">
          Queued: “{sent.length > 120 ? `${sent.slice(0, 120)}…` : sent}”
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
