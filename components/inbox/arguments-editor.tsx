"use client";

import { useTranslations } from "next-intl";
import { useId, useMemo } from "react";
import { argumentsDiff } from "./argument-diff";
import { ArgumentsDiffView } from "./arguments-diff-view";
import { fieldText, schemaForm, type TSchemaField, withField } from "./schema-form";

type TProps = {
  /** The arguments as the agent asked for them. */
  requested: unknown;
  /** The tool's JSON argument schema (null: only the raw JSON can be edited). */
  schema: Record<string, unknown> | null;
  /** The edited arguments as JSON text: the one state both the form and the raw JSON edit. */
  text: string;
  onText: (text: string) => void;
};

/** The edited text as an object, or null while it is not a JSON object. */
const parsedObject = (text: string): Record<string, unknown> | null => {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};

function FormField({ field, value, disabled, onChange, id }: { field: TSchemaField; value: unknown; disabled: boolean; onChange: (text: string) => void; id: string }) {
  const t = useTranslations("inbox.editor");
  const text = fieldText(field, value);
  const common = { id, disabled, "data-testid": `arg-field-${field.name}`, "data-arg-field": field.name } as const;
  let control: React.ReactNode;
  if (field.kind === "long-text")
    control = <textarea {...common} className="mono" rows={Math.min(6, Math.max(2, Math.ceil(text.length / 80)))} value={text} maxLength={field.maxLength ?? undefined} spellCheck={false} onChange={(e) => onChange(e.target.value)} />;
  else if (field.kind === "choice" || field.kind === "boolean")
    control = (
      <select {...common} className="input" value={text} onChange={(e) => onChange(e.target.value)}>
        {field.required ? null : <option value="">{t("notSet")}</option>}
        {(field.kind === "boolean" ? ["true", "false"] : field.choices).map((c) => (
          <option key={c} value={c}>
            {field.kind === "boolean" ? (c === "true" ? t("yes") : t("no")) : c}
          </option>
        ))}
      </select>
    );
  else
    control = (
      <input
        {...common}
        className={`input${field.kind === "text" ? " mono" : ""}`}
        type={field.kind === "text" ? "text" : "number"}
        inputMode={field.kind === "integer" ? "numeric" : undefined}
        min={field.min ?? undefined}
        max={field.max ?? undefined}
        maxLength={field.maxLength ?? undefined}
        value={text}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  return (
    <div className="field arg-field">
      <label htmlFor={id}>
        <code>{field.name}</code>
        {field.required ? null : <span className="muted small"> {t("optional")}</span>}
        {field.description ? <span className="muted small"> — {field.description}</span> : null}
      </label>
      {control}
    </div>
  );
}

/**
 * Edits a tool call's arguments: a form generated from the tool's argument schema, the raw JSON
 * beside it (the fallback for shapes the form cannot show), both editing the same text, and the
 * difference from the requested arguments shown as it changes.
 */
export function ArgumentsEditor({ requested, schema, text, onText }: TProps) {
  const t = useTranslations("inbox.editor");
  const baseId = useId();
  const form = useMemo(() => schemaForm(schema), [schema]);
  const current = parsedObject(text);
  const changes = current ? argumentsDiff(requested, current) : [];
  return (
    <div className="args-editor" data-testid="arguments-editor">
      {form ? (
        <fieldset className="args-form" data-testid="arguments-form">
          <legend>{t("legend")}</legend>
          {current ? null : <p className="muted small">{t("invalidJson")}</p>}
          {form.fields.map((field) => (
            <FormField
              key={field.name}
              id={`${baseId}-${field.name}`}
              field={field}
              value={current?.[field.name]}
              disabled={current === null}
              onChange={(value) => current && onText(JSON.stringify(withField(current, field, value), null, 2))}
            />
          ))}
        </fieldset>
      ) : null}
      <div className="field">
        <label htmlFor={`${baseId}-json`}>{form ? t("sameAsJson") : t("asJson")}</label>
        <textarea
          id={`${baseId}-json`}
          className="mono"
          rows={Math.min(12, text.split("\n").length + 1)}
          value={text}
          onChange={(e) => onText(e.target.value)}
          spellCheck={false}
          data-testid="edit-arguments"
        />
      </div>
      <ArgumentsDiffView changes={changes} />
    </div>
  );
}
