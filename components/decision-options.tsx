"use client";

import { useId, useState } from "react";

/** A standing grant as the decision API takes it. */
export type TGrantChoice = "session" | { days: number };
/** What a decision may carry besides approve/deny: an edit, a reply, a standing grant. */
export type TDecisionExtra = { arguments?: Record<string, unknown>; message?: string; grant?: TGrantChoice };

type TOptions = { editable: boolean; grantSession: boolean; grantMaxDays: number };

type TProps = {
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
    // The parser's own words are for programs; say where to look instead.
    const at = /position (\d+)/.exec(error instanceof Error ? error.message : "")?.[1];
    return { ok: false, error: `Not valid JSON: check the quotes, commas and braces${at ? ` near character ${Number(at) + 1}` : ""}, then approve again.` };
  }
}

/**
 * The decision options under an approval: edit the arguments before approving, deny with a reply
 * the agent receives instead, or approve with a standing grant (when the agent allows one). A
 * grant is only ever the explicit choice of its own button, which then asks to confirm its scope:
 * no default, and focus or Enter in a field never selects one. The server validates everything
 * again (the tool's schema, the agent's grant limits).
 */
export function DecisionOptions({ arguments: args, options, busy, disabled, onApprove, onReply }: TProps) {
  const ids = { edit: useId(), reply: useId(), days: useId() };
  const original = JSON.stringify(args, null, 2);
  const [edited, setEdited] = useState(original);
  const [reply, setReply] = useState("");
  const [days, setDays] = useState(1);
  const [problem, setProblem] = useState<string | null>(null);
  const grantsAllowed = options.grantSession || options.grantMaxDays > 0;
  const isEdited = options.editable && edited.trim() !== original.trim();

  /** The edited arguments (undefined when unchanged), or null after saying what is wrong. */
  const editedArgs = (): Record<string, unknown> | undefined | null => {
    if (!isEdited) return undefined;
    const parsed = parseEdited(edited);
    if (parsed.ok) return parsed.value;
    setProblem(parsed.error);
    return null;
  };
  const approve = (grant?: TGrantChoice) => {
    setProblem(null);
    if (grant && grant !== "session" && (!Number.isInteger(grant.days) || grant.days < 1 || grant.days > options.grantMaxDays)) {
      setProblem(`Days must be a whole number from 1 to ${options.grantMaxDays}.`);
      return;
    }
    const changed = editedArgs();
    if (changed === null) return;
    onApprove({ ...(changed ? { arguments: changed } : {}), ...(grant ? { grant } : {}) });
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
      <summary className="options-summary">More options: edit, reply instead, standing grant</summary>
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
      <div className="actions">
        <button type="button" className="btn btn-approve" onClick={() => approve()} disabled={busy || disabled} data-testid="approve-with-options">
          {isEdited ? "Approve the edited call once" : "Approve once"}
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
      {grantsAllowed ? (
        <fieldset className="field grant-choice" data-testid="grant-choice">
          <legend>Approve with a standing grant</legend>
          <p className="muted small">
            A grant lets {isEdited ? "the edited" : "this exact"} call run again without asking. Each button first shows exactly what it allows and asks you to confirm.
          </p>
          <div className="grant-buttons">
            {options.grantSession ? (
              <button type="button" className="btn" onClick={() => approve("session")} disabled={busy || disabled} data-testid="grant-session">
                Approve and allow for this session…
              </button>
            ) : null}
            {options.grantMaxDays > 0 ? (
              <span className="grant-days">
                <label htmlFor={ids.days}>Days</label>
                <input
                  id={ids.days}
                  type="number"
                  min={1}
                  max={options.grantMaxDays}
                  value={days}
                  onChange={(e) => setDays(Number(e.target.value))}
                  className="days-input"
                  data-testid="grant-days-input"
                  aria-describedby={`${ids.days}-max`}
                />
                <span id={`${ids.days}-max`} className="muted small">
                  at most {options.grantMaxDays}
                </span>
                <button type="button" className="btn" onClick={() => approve({ days })} disabled={busy || disabled} data-testid="grant-days">
                  Approve and allow for {days} day{days === 1 ? "" : "s"}…
                </button>
              </span>
            ) : null}
          </div>
        </fieldset>
      ) : null}
      {problem ? (
        <p role="alert" className="error-box">
          {problem}
        </p>
      ) : null}
    </details>
  );
}
