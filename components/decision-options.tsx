"use client";

import { useId, useState } from "react";

/** A standing grant as the decision API takes it. */
export type TGrantChoice = "session" | { days: number };
/** What a decision may carry besides approve/deny: an edit, a reply, a standing grant. */
export type TDecisionExtra = { arguments?: Record<string, unknown>; message?: string; grant?: TGrantChoice };

type TOptions = { editable: boolean; grantSession: boolean; grantMaxDays: number };

type TProps = {
  approvalId: string;
  arguments: unknown;
  options: TOptions;
  busy: boolean;
  disabled: boolean;
  onApprove: (extra: TDecisionExtra) => void;
  onReply: (message: string) => void;
};

/** Parses the edited arguments: a JSON object, or a sentence saying what is wrong. */
function parseEdited(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  try {
    const value = JSON.parse(text) as unknown;
    if (value === null || typeof value !== "object" || Array.isArray(value)) return { ok: false, error: "The arguments must be a JSON object." };
    return { ok: true, value: value as Record<string, unknown> };
  } catch (error) {
    return { ok: false, error: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * The decision options under an approval: edit the arguments before approving, approve with a
 * standing grant (when the agent allows one), or deny with a reply the agent receives instead.
 * The server validates everything again (the tool's schema, the agent's grant limits).
 */
export function DecisionOptions({ approvalId, arguments: args, options, busy, disabled, onApprove, onReply }: TProps) {
  const ids = { edit: useId(), reply: useId(), grant: useId(), days: useId() };
  const original = JSON.stringify(args, null, 2);
  const [edited, setEdited] = useState(original);
  const [reply, setReply] = useState("");
  const [grantKind, setGrantKind] = useState<"none" | "session" | "days">("none");
  const [days, setDays] = useState(1);
  const [problem, setProblem] = useState<string | null>(null);
  const grantsAllowed = options.grantSession || options.grantMaxDays > 0;

  const grant = (): TGrantChoice | undefined => (grantKind === "session" ? "session" : grantKind === "days" ? { days } : undefined);
  const approve = () => {
    setProblem(null);
    if (grantKind === "days" && (!Number.isInteger(days) || days < 1 || days > options.grantMaxDays)) {
      setProblem(`Days must be a whole number from 1 to ${options.grantMaxDays}.`);
      return;
    }
    let editedArgs: Record<string, unknown> | undefined;
    if (options.editable && edited.trim() !== original.trim()) {
      const parsed = parseEdited(edited);
      if (!parsed.ok) {
        setProblem(parsed.error);
        return;
      }
      editedArgs = parsed.value;
    }
    onApprove({ ...(editedArgs ? { arguments: editedArgs } : {}), ...(grant() ? { grant: grant() } : {}) });
  };
  const sendReply = () => {
    setProblem(null);
    if (reply.trim() === "") {
      setProblem("Write the reply the agent should receive.");
      return;
    }
    onReply(reply.trim());
  };

  return (
    <details className="decision-options" data-testid="decision-options">
      <summary className="options-summary">More options: edit, grant, reply instead</summary>
      {options.editable ? (
        <div className="field">
          <label htmlFor={ids.edit}>Arguments (edit before approving)</label>
          <textarea
            id={ids.edit}
            className="mono"
            rows={Math.min(12, original.split("\n").length + 1)}
            value={edited}
            onChange={(e) => setEdited(e.target.value)}
            spellCheck={false}
            data-testid="edit-arguments"
          />
          <p className="muted small">The edited call runs instead of the requested one; both are recorded and the agent is told.</p>
        </div>
      ) : (
        <p className="muted small">This tool's arguments cannot be edited here.</p>
      )}
      {grantsAllowed ? (
        <fieldset className="field grant-choice">
          <legend>Standing grant for this exact operation</legend>
          <label className="plain-label">
            <input type="radio" name={`${ids.grant}-${approvalId}`} checked={grantKind === "none"} onChange={() => setGrantKind("none")} /> Only this once
          </label>
          {options.grantSession ? (
            <label className="plain-label">
              <input type="radio" name={`${ids.grant}-${approvalId}`} checked={grantKind === "session"} onChange={() => setGrantKind("session")} data-testid="grant-session" /> For the rest of this session
            </label>
          ) : null}
          {options.grantMaxDays > 0 ? (
            <label className="plain-label">
              <input type="radio" name={`${ids.grant}-${approvalId}`} checked={grantKind === "days"} onChange={() => setGrantKind("days")} data-testid="grant-days" /> For{" "}
              <input
                id={ids.days}
                type="number"
                min={1}
                max={options.grantMaxDays}
                value={days}
                onChange={(e) => setDays(Number(e.target.value))}
                onFocus={() => setGrantKind("days")}
                aria-label="Days"
                className="days-input"
              />{" "}
              days (at most {options.grantMaxDays})
            </label>
          ) : null}
        </fieldset>
      ) : null}
      <div className="actions">
        <button type="button" className="btn btn-approve" onClick={approve} disabled={busy || disabled} data-testid="approve-with-options">
          {options.editable && edited.trim() !== original.trim() ? "Approve edited call" : "Approve"}
          {grantKind !== "none" ? " with grant" : ""}
        </button>
      </div>
      <div className="field">
        <label htmlFor={ids.reply}>Reply instead (deny; the agent receives this message as the tool's result)</label>
        <textarea id={ids.reply} rows={2} maxLength={4000} value={reply} onChange={(e) => setReply(e.target.value)} placeholder="e.g. use the staging database instead" data-testid="reply-message" />
        <div className="actions">
          <button type="button" className="btn btn-deny" onClick={sendReply} disabled={busy || disabled} data-testid="deny-with-reply">
            Deny and reply
          </button>
        </div>
      </div>
      {problem ? (
        <p role="alert" className="error-box">
          {problem}
        </p>
      ) : null}
    </details>
  );
}
