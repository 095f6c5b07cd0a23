"use client";

import { useTranslations } from "next-intl";
import { useEffect, useId, useRef, useState } from "react";
import { ArgumentsEditor } from "./inbox/arguments-editor";

/** A standing grant as the decision API takes it. */
export type TGrantChoice = "session" | { days: number };
/** What a decision may carry besides approve/deny: an edit, a reply, a standing grant. */
export type TDecisionExtra = { arguments?: Record<string, unknown>; message?: string; grant?: TGrantChoice };

type TOptions = { editable: boolean; argumentsSchema: Record<string, unknown> | null; grantSession: boolean; grantMaxDays: number };

/** A shortcut's request to open the options at one field (`seq` changes on every press). */
export type TOptionsFocus = { field: "edit" | "reply" | "grant"; seq: number };

type TProps = {
  arguments: unknown;
  options: TOptions;
  busy: boolean;
  disabled: boolean;
  onApprove: (extra: TDecisionExtra) => void;
  onReply: (message: string) => void;
  /** Opens the options and focuses the field a shortcut asked for (`e`, `r`, `g`). */
  focus?: TOptionsFocus | null;
};

/** Parses the edited arguments: a JSON object, or a sentence saying what is wrong. */
function parseEdited(text: string, t: ReturnType<typeof useTranslations<"decisionOptions">>): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  try {
    const value = JSON.parse(text) as unknown;
    if (value === null || typeof value !== "object" || Array.isArray(value)) return { ok: false, error: t("notObject") };
    return { ok: true, value: value as Record<string, unknown> };
  } catch (error) {
    // The parser's own words are for programs; say where to look instead.
    const at = /position (\d+)/.exec(error instanceof Error ? error.message : "")?.[1];
    return { ok: false, error: at ? t("notJsonAt", { at: Number(at) + 1 }) : t("notJson") };
  }
}

/**
 * The decision options under an approval: edit the arguments before approving, deny with a reply
 * the agent receives instead, or approve with a standing grant (when the agent allows one). A
 * grant is only ever the explicit choice of its own button, which then asks to confirm its scope:
 * no default, and focus or Enter in a field never selects one. The server validates everything
 * again (the tool's schema, the agent's grant limits).
 */
export function DecisionOptions({ arguments: args, options, busy, disabled, onApprove, onReply, focus = null }: TProps) {
  const t = useTranslations("decisionOptions");
  const ids = { reply: useId(), days: useId() };
  const root = useRef<HTMLDetailsElement>(null);
  const [open, setOpen] = useState(false);
  const original = JSON.stringify(args, null, 2);
  const [edited, setEdited] = useState(original);
  const [reply, setReply] = useState("");
  const [days, setDays] = useState(1);
  const [problem, setProblem] = useState<string | null>(null);
  const grantsAllowed = options.grantSession || options.grantMaxDays > 0;

  // A shortcut opens the options at its field. The grant shortcut focuses the days field (or the
  // grant group): typing there or pressing Enter chooses nothing; only a grant button does, and
  // that button still asks to confirm the scope.
  useEffect(() => {
    if (!focus) return;
    const el = root.current;
    if (!el) return;
    // Opened here, not only through state: a closed <details> has nothing to focus yet.
    el.open = true;
    setOpen(true);
    const target =
      focus.field === "edit"
        ? el.querySelector<HTMLElement>("[data-arg-field], [data-testid='edit-arguments']")
        : focus.field === "reply"
          ? el.querySelector<HTMLElement>("[data-testid='reply-message']")
          : (el.querySelector<HTMLElement>("[data-testid='grant-days-input']") ?? el.querySelector<HTMLElement>("[data-testid='grant-choice']"));
    target?.focus({ preventScroll: true });
    target?.scrollIntoView({ block: "nearest" });
  }, [focus]);
  const isEdited = options.editable && edited.trim() !== original.trim();

  /** The edited arguments (undefined when unchanged), or null after saying what is wrong. */
  const editedArgs = (): Record<string, unknown> | undefined | null => {
    if (!isEdited) return undefined;
    const parsed = parseEdited(edited, t);
    if (parsed.ok) return parsed.value;
    setProblem(parsed.error);
    return null;
  };
  const approve = (grant?: TGrantChoice) => {
    setProblem(null);
    if (grant && grant !== "session" && (!Number.isInteger(grant.days) || grant.days < 1 || grant.days > options.grantMaxDays)) {
      setProblem(t("daysRange", { max: options.grantMaxDays }));
      return;
    }
    const changed = editedArgs();
    if (changed === null) return;
    onApprove({ ...(changed ? { arguments: changed } : {}), ...(grant ? { grant } : {}) });
  };
  const sendReply = () => {
    setProblem(null);
    if (reply.trim() === "") {
      setProblem(t("writeReply"));
      return;
    }
    onReply(reply.trim());
  };

  return (
    <details ref={root} className="decision-options" data-testid="decision-options" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary className="options-summary">{t("summary")}</summary>
      {options.editable ? (
        <>
          <ArgumentsEditor requested={args} schema={options.argumentsSchema} text={edited} onText={setEdited} />
          <p className="muted small">{t("editedRuns")}</p>
        </>
      ) : (
        <p className="muted small">{t("notEditable")}</p>
      )}
      <div className="actions">
        <button type="button" className="btn btn-approve" onClick={() => approve()} disabled={busy || disabled} data-testid="approve-with-options">
          {isEdited ? t("approveEditedOnce") : t("approveOnce")}
        </button>
      </div>
      <div className="field">
        <label htmlFor={ids.reply}>{t("replyLabel")}</label>
        <textarea id={ids.reply} rows={2} maxLength={4000} value={reply} onChange={(e) => setReply(e.target.value)} placeholder={t("replyPlaceholder")} data-testid="reply-message" />
        <div className="actions">
          <button type="button" className="btn btn-deny" onClick={sendReply} disabled={busy || disabled} data-testid="deny-with-reply">
            {t("denyReply")}
          </button>
        </div>
      </div>
      {grantsAllowed ? (
        <fieldset className="field grant-choice" data-testid="grant-choice" tabIndex={-1}>
          <legend>{t("grantLegend")}</legend>
          <p className="muted small">
            {t("grantHelp", { edited: isEdited ? "yes" : "no" })}
          </p>
          <div className="grant-buttons">
            {options.grantSession ? (
              <button type="button" className="btn" onClick={() => approve("session")} disabled={busy || disabled} data-testid="grant-session">
                {t("grantSession")}
              </button>
            ) : null}
            {options.grantMaxDays > 0 ? (
              <span className="grant-days">
                <label htmlFor={ids.days}>{t("days")}</label>
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
                  {t("atMost", { max: options.grantMaxDays })}
                </span>
                <button type="button" className="btn" onClick={() => approve({ days })} disabled={busy || disabled} data-testid="grant-days">
                  {t("grantDays", { days })}
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
