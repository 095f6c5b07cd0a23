"use client";

import { useTranslations } from "next-intl";
import { type ReactNode, useState } from "react";
import type { TFormFieldView as TField, TQuestionView as TQuestion } from "./api-types";
import { enumLabel, fieldLabel, inputId, optionValue, resolvedHostname, shapeOf, splitUrl, type TDraft, type TQuestionTranslator, URL_CONFIRM, URL_DECLINE } from "./question-model";

type TInputProps = {
  q: TQuestion;
  draft: TDraft;
  onChange: (next: TDraft) => void;
  /** Answer key → message. */
  errors: Record<string, string>;
  disabled: boolean;
  /** Prefix of element ids (unique per page). */
  prefix: string;
};

const describedBy = (...ids: (string | false | null | undefined)[]): string | undefined => ids.filter(Boolean).join(" ") || undefined;

function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <p id={id} className="field-error" data-testid="field-error">
      {message}
    </p>
  );
}

function RequiredMark() {
  const t = useTranslations("question");
  return (
    <>
      <span className="req" aria-hidden="true">
        *
      </span>
      <span className="visually-hidden">{t("required")}</span>
    </>
  );
}

/** A masked input with a show/hide toggle; never autocompleted, spell-checked or remembered. */
export function SecretInput({
  id,
  value,
  onChange,
  invalid,
  ariaDescribedBy,
  required,
  disabled,
}: {
  id: string;
  value: string;
  onChange: (value: string) => void;
  invalid: boolean;
  ariaDescribedBy?: string;
  required?: boolean;
  disabled: boolean;
}) {
  const t = useTranslations("question");
  const [shown, setShown] = useState(false);
  return (
    <div className="secret-row">
      <input
        id={id}
        type={shown ? "text" : "password"}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        autoComplete="off"
        autoCapitalize="off"
        autoCorrect="off"
        spellCheck={false}
        data-1p-ignore=""
        data-lpignore="true"
        aria-invalid={invalid || undefined}
        aria-describedby={ariaDescribedBy}
        aria-required={required || undefined}
        disabled={disabled}
        className="input"
      />
      <button type="button" className="btn btn-quiet" aria-controls={id} onClick={() => setShown((s) => !s)} disabled={disabled}>
        {shown ? t("hide") : t("show")}
        <span className="visually-hidden">{t("theValue")}</span>
      </button>
    </div>
  );
}

/** The literal URL exactly as given, monospace, its host emphasized; never a link here. */
export function LiteralUrl({ url }: { url: string }) {
  const t = useTranslations("question");
  const { before, host, after } = splitUrl(url);
  const hostname = resolvedHostname(url);
  return (
    <div className="url-box">
      <code className="url-literal" data-testid="literal-url">
        {before}
        <strong className="url-host">{host}</strong>
        {after}
      </code>
      {hostname ? (
        <p className="small muted url-host-line">
          {t("site")}
          <strong className="url-hostname" data-testid="url-hostname">{hostname}</strong>
        </p>
      ) : null}
    </div>
  );
}

function Hint({ id, children }: { id: string; children: ReactNode }) {
  return (
    <p id={id} className="hint">
      {children}
    </p>
  );
}

function fieldHint(f: TField, t: TQuestionTranslator): string | null {
  const parts: string[] = [];
  if (f.type === "integer") parts.push(t("hintWhole"));
  if (f.type === "number") parts.push(t("hintNumber"));
  if (f.minimum !== undefined && f.maximum !== undefined) parts.push(t("hintRange", { min: f.minimum, max: f.maximum }));
  else if (f.minimum !== undefined) parts.push(t("hintAtLeast", { min: f.minimum }));
  else if (f.maximum !== undefined) parts.push(t("hintAtMost", { max: f.maximum }));
  if (f.format === "email") parts.push(t("hintEmail"));
  else if (f.format === "uri") parts.push(t("hintUri"));
  else if (f.format === "date") parts.push(t("hintDate"));
  else if (f.format === "date-time") parts.push(t("hintDateTime"));
  if (f.minLength !== undefined) parts.push(t("hintMinLength", { min: f.minLength }));
  if (f.maxLength !== undefined) parts.push(t("hintMaxLength", { max: f.maxLength }));
  if (f.multiple && f.minItems !== undefined && f.maxItems !== undefined) parts.push(t("hintItems", { min: f.minItems, max: f.maxItems }));
  else if (f.multiple && f.minItems !== undefined) parts.push(t("hintItemsAtLeast", { min: f.minItems }));
  else if (f.multiple && f.maxItems !== undefined) parts.push(t("hintItemsAtMost", { max: f.maxItems }));
  if (f.default !== undefined && !f.secret && f.type !== "boolean") {
    const shown = Array.isArray(f.default) ? f.default.map((v) => enumLabel(f, v)).join(", ") : f.type === "enum" ? enumLabel(f, String(f.default)) : String(f.default);
    if (shown) parts.push(t("hintDefault", { value: shown }));
  }
  if (parts.length === 0) return null;
  const text = parts.join(t("hintSeparator"));
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** The browser input for each string format (a date-time is entered in the browser's time zone and sent as an instant). */
const INPUT_TYPES: Record<NonNullable<TField["format"]>, string> = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };

/** One schema-form field: label, description, input, inline message. */
function FormField({ f, q, draft, onChange, errors, disabled, prefix }: TInputProps & { f: TField }) {
  const t = useTranslations("question");
  const key = `${q.questionId}.${f.name}`;
  const id = inputId(prefix, key);
  const errorId = `${id}-error`;
  const descId = `${id}-desc`;
  const hintId = `${id}-hint`;
  const error = errors[key];
  const value = draft.fields[f.name] ?? "";
  const set = (v: string) => onChange({ ...draft, fields: { ...draft.fields, [f.name]: v } });
  const hint = fieldHint(f, t);
  const aria = describedBy(f.description && descId, hint && hintId, error && errorId);
  const required = Boolean(f.required);

  if (f.multiple) {
    // A multi-select: one checkbox per choice, grouped under the field's label.
    const chosen = draft.many[f.name] ?? [];
    const toggle = (v: string, on: boolean) =>
      onChange({ ...draft, many: { ...draft.many, [f.name]: on ? (f.enum ?? []).filter((x) => x === v || chosen.includes(x)) : chosen.filter((x) => x !== v) } });
    return (
      <fieldset className="form-field" data-field={f.name} aria-describedby={aria} aria-invalid={error ? true : undefined}>
        <legend>
          {fieldLabel(f)}
          {required || f.minItems ? <RequiredMark /> : null}
        </legend>
        {f.description ? <Hint id={descId}>{f.description}</Hint> : null}
        {(f.enum ?? []).map((v, i) => (
          <div className="check-row" key={v}>
            <input id={`${id}-${i}`} type="checkbox" value={v} checked={chosen.includes(v)} onChange={(e) => toggle(v, e.target.checked)} disabled={disabled} />
            <label htmlFor={`${id}-${i}`}>{enumLabel(f, v)}</label>
          </div>
        ))}
        {hint ? <Hint id={hintId}>{hint}</Hint> : null}
        <FieldError id={errorId} message={error} />
      </fieldset>
    );
  }

  if (f.type === "boolean") {
    return (
      <div className="form-field" data-field={f.name}>
        <div className="check-row">
          <input
            id={id}
            type="checkbox"
            checked={value === "true"}
            onChange={(e) => set(e.target.checked ? "true" : "false")}
            aria-invalid={error ? true : undefined}
            aria-describedby={aria}
            disabled={disabled}
          />
          <label htmlFor={id}>
            {fieldLabel(f)}
            {required ? <RequiredMark /> : null}
          </label>
        </div>
        {f.description ? <Hint id={descId}>{f.description}</Hint> : null}
        <FieldError id={errorId} message={error} />
      </div>
    );
  }

  let control: ReactNode;
  if (f.type === "enum") {
    control = (
      <select
        id={id}
        className="input"
        value={value}
        onChange={(e) => set(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={aria}
        aria-required={required || undefined}
        disabled={disabled}
      >
        {f.default === undefined ? <option value="">{t("choosePlaceholder")}</option> : null}
        {(f.enum ?? []).map((v) => (
          <option key={v} value={v}>
            {enumLabel(f, v)}
          </option>
        ))}
      </select>
    );
  } else if (f.secret) {
    control = <SecretInput id={id} value={value} onChange={set} invalid={Boolean(error)} ariaDescribedBy={aria} required={required} disabled={disabled} />;
  } else {
    const numeric = f.type === "number" || f.type === "integer";
    control = (
      <input
        id={id}
        className="input"
        type={f.format ? INPUT_TYPES[f.format] : "text"}
        inputMode={f.type === "number" ? "decimal" : f.type === "integer" ? (f.minimum !== undefined && f.minimum >= 0 ? "numeric" : "text") : undefined}
        value={value}
        onChange={(e) => set(e.target.value)}
        autoComplete="off"
        spellCheck={numeric ? false : undefined}
        aria-invalid={error ? true : undefined}
        aria-describedby={aria}
        aria-required={required || undefined}
        disabled={disabled}
      />
    );
  }
  return (
    <div className="form-field" data-field={f.name}>
      <label htmlFor={id}>
        {fieldLabel(f)}
        {required ? <RequiredMark /> : null}
        {f.secret ? <span className="chip secret-chip">{t("secretChip")}</span> : null}
      </label>
      {f.description ? <Hint id={descId}>{f.description}</Hint> : null}
      {control}
      {hint ? <Hint id={hintId}>{hint}</Hint> : null}
      <FieldError id={errorId} message={error} />
    </div>
  );
}

/**
 * One question as a fieldset: its header and text are the legend; the inputs depend on its
 * shape (choices, free text, secret, form fields, or a literal URL to confirm).
 */
export function QuestionInput(props: TInputProps & { index: number; total: number; urlButtons: boolean }) {
  const { q, draft, onChange, errors, disabled, prefix, index, total, urlButtons } = props;
  const t = useTranslations("question");
  const shape = shapeOf(q);
  const id = inputId(prefix, q.questionId);
  const legendId = `${id}-legend`;
  const errorId = `${id}-error`;
  const error = errors[q.questionId];
  const anyRequired = shape === "form" && (q.fields ?? []).some((f) => f.required);

  const legend = (
    <legend id={legendId} className="q-legend">
      <span className="q-header">
        {total > 1 ? <span className="visually-hidden">{t("ofTotal", { index: index + 1, total })}</span> : null}
        {q.header}
      </span>
      <span className="q-text">{q.question}</span>
    </legend>
  );

  if (shape === "form") {
    return (
      <fieldset className="q-fieldset" data-testid="question" data-question-id={q.questionId} data-shape={shape}>
        {legend}
        {anyRequired ? (
          <p className="hint">{t.rich("requiredFields", { req: (chunks) => <span className="req">{chunks}</span> })}</p>
        ) : null}
        <div className="form-fields">
          {(q.fields ?? []).map((f) => (
            <FormField key={f.name} f={f} {...props} />
          ))}
        </div>
      </fieldset>
    );
  }

  if (shape === "url") {
    return (
      <fieldset className="q-fieldset" data-testid="question" data-question-id={q.questionId} data-shape={shape} aria-describedby={describedBy(error && errorId)}>
        {legend}
        <LiteralUrl url={q.url as string} />
        <p className="hint">{t("urlHint")}</p>
        {urlButtons ? null : (
          <div className="choices">
            {[
              { value: URL_CONFIRM, label: t("urlConfirm") },
              { value: URL_DECLINE, label: t("urlDecline") },
            ].map((o) => (
              <label key={o.value} className="choice">
                <input
                  type="radio"
                  name={id}
                  value={o.value}
                  checked={draft.choice[0] === o.value}
                  onChange={() => onChange({ ...draft, choice: [o.value] })}
                  aria-invalid={error ? true : undefined}
                  disabled={disabled}
                />
                <span className="choice-text">
                  <span className="choice-label">{o.label}</span>
                </span>
              </label>
            ))}
          </div>
        )}
        <FieldError id={errorId} message={error} />
      </fieldset>
    );
  }

  if (shape === "text" || shape === "secret") {
    const textId = `${id}-text`;
    const hintId = `${id}-hint`;
    return (
      <fieldset className="q-fieldset" data-testid="question" data-question-id={q.questionId} data-shape={shape}>
        {legend}
        <div className="form-field">
          <label htmlFor={textId}>{shape === "secret" ? t("secretValue") : t("yourAnswer")}</label>
          {shape === "secret" ? (
            <>
              <SecretInput
                id={textId}
                value={draft.text}
                onChange={(text) => onChange({ ...draft, text })}
                invalid={Boolean(error)}
                ariaDescribedBy={describedBy(hintId, error && errorId)}
                required
                disabled={disabled}
              />
              <Hint id={hintId}>{t("secretHint")}</Hint>
            </>
          ) : (
            <>
              <textarea
                id={textId}
                className="input"
                rows={3}
                value={draft.text}
                onChange={(e) => onChange({ ...draft, text: e.target.value })}
                aria-invalid={error ? true : undefined}
                aria-describedby={describedBy(hintId, error && errorId)}
                aria-required
                disabled={disabled}
              />
              <Hint id={hintId}>{t("textHint")}</Hint>
            </>
          )}
          <FieldError id={errorId} message={error} />
        </div>
      </fieldset>
    );
  }

  // Single or multiple choice, with "Other…" free text when the question allows it.
  const multi = shape === "multi";
  const otherId = `${id}-other`;
  const otherTextId = `${id}-other-text`;
  const pick = (value: string, checked: boolean) => {
    if (!multi) return onChange({ ...draft, choice: [value], otherOn: false });
    const choice = checked ? [...draft.choice.filter((v) => v !== value), value] : draft.choice.filter((v) => v !== value);
    onChange({ ...draft, choice });
  };
  const pickOther = (checked: boolean) => onChange(multi ? { ...draft, otherOn: checked } : { ...draft, choice: [], otherOn: true });
  return (
    <fieldset className="q-fieldset" data-testid="question" data-question-id={q.questionId} data-shape={shape} aria-describedby={describedBy(error && errorId)}>
      {legend}
      <p className="hint">{multi ? t("chooseAll") : t("chooseOne")}</p>
      <div className="choices">
        {q.options.map((o) => {
          const value = optionValue(o);
          const optId = `${id}-opt-${inputId("", value)}`;
          const descId = `${optId}-desc`;
          return (
            <label key={value} className="choice" htmlFor={optId}>
              <input
                id={optId}
                type={multi ? "checkbox" : "radio"}
                name={id}
                value={value}
                checked={!draft.otherOn || multi ? draft.choice.includes(value) : false}
                onChange={(e) => pick(value, e.target.checked)}
                aria-invalid={error ? true : undefined}
                aria-describedby={o.description ? descId : undefined}
                disabled={disabled}
              />
              <span className="choice-text">
                <span className="choice-label">{o.label}</span>
                {o.description ? (
                  <span id={descId} className="choice-desc">
                    {o.description}
                  </span>
                ) : null}
              </span>
            </label>
          );
        })}
        {q.isOther ? (
          <label className="choice" htmlFor={otherId}>
            <input
              id={otherId}
              type={multi ? "checkbox" : "radio"}
              name={id}
              value="__other__"
              checked={draft.otherOn}
              onChange={(e) => pickOther(e.target.checked)}
              aria-invalid={error ? true : undefined}
              disabled={disabled}
            />
            <span className="choice-text">
              <span className="choice-label">{t("other")}</span>
            </span>
          </label>
        ) : null}
      </div>
      {q.isOther && draft.otherOn ? (
        <div className="form-field other-field">
          <label htmlFor={otherTextId}>{t("yourOther")}</label>
          <textarea
            id={otherTextId}
            className="input"
            rows={2}
            value={draft.text}
            onChange={(e) => onChange({ ...draft, text: e.target.value })}
            aria-invalid={error ? true : undefined}
            aria-describedby={describedBy(error && errorId)}
            disabled={disabled}
          />
        </div>
      ) : null}
      <FieldError id={errorId} message={error} />
    </fieldset>
  );
}
