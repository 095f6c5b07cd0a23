"use client";

import { type FormEvent, type ReactNode, useId } from "react";
import { useErrorSentence } from "./use-error-sentence";

/**
 * A text box sent to a response (steering, a side question): label and hint, Ctrl/⌘+Enter sends,
 * the button says when it is sending, what came back sits under it, and a refusal is a sentence.
 */
export function TextSendForm(props: {
  testId: string;
  label: string;
  hint: string;
  placeholder: string;
  value: string;
  onChange: (value: string) => void;
  onSend: (text: string) => void;
  pending: boolean;
  sendLabel: string;
  pendingLabel: string;
  primary?: boolean;
  error: unknown;
  children?: ReactNode;
}) {
  const id = useId();
  const errorSentence = useErrorSentence();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (props.value.trim()) props.onSend(props.value.trim());
  };
  return (
    <form className="card steer-form" onSubmit={submit} data-testid={props.testId}>
      <label htmlFor={id}>
        <strong>{props.label}</strong> <span className="muted small">{props.hint}</span>
      </label>
      <div className="steer-row">
        <textarea
          id={id}
          className="input"
          rows={2}
          maxLength={10_000}
          value={props.value}
          onChange={(e) => props.onChange(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) submit(e);
          }}
          placeholder={props.placeholder}
        />
        <button type="submit" className={props.primary ? "btn btn-primary" : "btn"} disabled={props.pending || !props.value.trim()}>
          {props.pending ? props.pendingLabel : props.sendLabel}
        </button>
      </div>
      {props.children}
      {props.error ? (
        <p role="alert" className="error-box">
          {errorSentence(props.error, "change")}
        </p>
      ) : null}
    </form>
  );
}
