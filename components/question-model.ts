import { createTranslator, type useTranslations } from "next-intl";
import en from "../messages/en.json";
import type { TFormFieldView as TField, TQuestionView as TQuestion } from "./api-types";

/**
 * The answer page's model of a question: what it looks like, the person's draft answer, the
 * client-side checks (mirroring server/core/questions/answers.ts, for clear messages; the server
 * stays the authority) and the flat answer map sent to `question.resolve`.
 */

export type TQuestionShape = "url" | "form" | "secret" | "single" | "multi" | "text";

export const URL_CONFIRM = "confirm";
export const URL_DECLINE = "decline";
export const STORED = "stored";

export function shapeOf(q: TQuestion): TQuestionShape {
  if (q.url) return "url";
  if (q.fields) return "form";
  if (q.options.length === 0) return q.isSecret ? "secret" : "text";
  return q.multiSelect ? "multi" : "single";
}

/** The translator of the `question` messages (the page's language); English when none is given. */
export type TQuestionTranslator = ReturnType<typeof useTranslations<"question">>;

const ENGLISH: TQuestionTranslator = createTranslator({ locale: "en", messages: en, namespace: "question" });

export const shapeLabel = (q: TQuestion, t: TQuestionTranslator = ENGLISH): string => t(`shape.${shapeOf(q)}`);

/** "Single choice", or "Form + Free text" for a record asking several kinds of things. */
export const kindLabel = (questions: readonly TQuestion[], t: TQuestionTranslator = ENGLISH): string =>
  [...new Set(questions.map((q) => shapeLabel(q, t)))].join(" + ");

export const optionValue = (o: { label: string; value?: string }): string => o.value ?? o.label;

/** A field's visible name. */
export const fieldLabel = (f: TField): string => f.label ?? f.name;

/** The person's unsent answer to one question. */
export type TDraft = {
  /** Chosen option values (single: at most one), or `confirm` / `decline` for a URL. */
  choice: string[];
  /** "Other…" picked (choice questions with isOther). */
  otherOn: boolean;
  /** Free text: the "Other…" text, a free-text answer, or a secret. */
  text: string;
  /** Form field name → raw value ("true"/"false" for booleans; a date-time as the browser's local "YYYY-MM-DDTHH:mm"). */
  fields: Record<string, string>;
  /** Multi-select form field name → the chosen values. */
  many: Record<string, string[]>;
};

export function initialDraft(q: TQuestion): TDraft {
  const fields: Record<string, string> = {};
  const many: Record<string, string[]> = {};
  for (const f of q.fields ?? []) {
    if (f.multiple) many[f.name] = Array.isArray(f.default) ? [...f.default] : [];
    else fields[f.name] = f.default !== undefined ? String(f.default) : f.type === "boolean" ? "false" : "";
  }
  return { choice: [], otherOn: false, text: "", fields, many };
}

export const initialDrafts = (questions: readonly TQuestion[]): Record<string, TDraft> =>
  Object.fromEntries(questions.map((q) => [q.questionId, initialDraft(q)]));

/** DOM-safe id of an input for an answer key (question id or `question.field`). */
export const inputId = (prefix: string, key: string): string => `${prefix}-${key.replace(/[^a-zA-Z0-9_-]/g, "-")}`;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A field's visible label for one of its enum values (its title when the schema gave one). */
export const enumLabel = (f: TField, value: string): string => f.enumTitles?.[f.enum?.indexOf(value) ?? -1] ?? value;

/** The value sent for a date-time field: the browser's local "YYYY-MM-DDTHH:mm" as an ISO instant (UTC). */
export const dateTimeValue = (local: string): string => {
  const at = new Date(local);
  return Number.isNaN(at.getTime()) ? local : at.toISOString();
};

/** Checks a multi-select field's chosen values; null when they are fine. */
export function checkMany(f: TField, values: readonly string[], t: TQuestionTranslator = ENGLISH): string | null {
  const min = f.minItems ?? (f.required ? 1 : 0);
  if (values.length < min) return min === 1 ? t("check.chooseAtLeastOne") : t("check.atLeastItems", { min });
  if (f.maxItems !== undefined && values.length > f.maxItems) return t("check.atMostItems", { max: f.maxItems });
  return null;
}

/** Checks one form field's raw value; null when it is fine. */
export function checkField(f: TField, raw: string, t: TQuestionTranslator = ENGLISH): string | null {
  const v = f.type === "string" ? raw : raw.trim();
  if (v === "") {
    if (f.required && f.default === undefined) return f.type === "enum" ? t("check.chooseOption") : t("check.required");
    return null;
  }
  switch (f.type) {
    case "number":
    case "integer": {
      const n = Number(v);
      if (!Number.isFinite(n)) return t("check.number");
      if (f.type === "integer" && !Number.isInteger(n)) return t("check.wholeNumber");
      if (f.minimum !== undefined && n < f.minimum) return t("check.atLeast", { min: f.minimum });
      if (f.maximum !== undefined && n > f.maximum) return t("check.atMost", { max: f.maximum });
      return null;
    }
    case "boolean":
      return v === "true" || v === "false" ? null : t("check.yesNo");
    case "enum":
      return f.enum?.includes(v) ? null : t("check.chooseOption");
    default: {
      if (f.maxLength !== undefined && v.length > f.maxLength) return t("check.maxLength", { max: f.maxLength, length: v.length });
      if (f.minLength !== undefined && v.length < f.minLength) return t("check.minLength", { min: f.minLength, length: v.length });
      if (f.format === "email" && !EMAIL.test(v)) return t("check.email");
      if (f.format === "uri" && !URL.canParse(v)) return t("check.uri");
      if (f.format === "date" && !/^\d{4}-\d{2}-\d{2}$/.test(v)) return t("check.date");
      if (f.format === "date-time" && Number.isNaN(new Date(v).getTime())) return t("check.dateTime");
      return null;
    }
  }
}

/** Answer key (question id or `question.field`) → message, for everything that needs fixing. */
export function checkDrafts(questions: readonly TQuestion[], drafts: Record<string, TDraft>, t: TQuestionTranslator = ENGLISH): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const q of questions) {
    const d = drafts[q.questionId] ?? initialDraft(q);
    const shape = shapeOf(q);
    if (shape === "form") {
      for (const f of q.fields ?? []) {
        const message = f.multiple ? checkMany(f, d.many[f.name] ?? [], t) : checkField(f, d.fields[f.name] ?? "", t);
        if (message) errors[`${q.questionId}.${f.name}`] = message;
      }
    } else if (shape === "url") {
      if (d.choice.length !== 1) errors[q.questionId] = t("check.confirmOrDecline");
    } else if (shape === "text" || shape === "secret") {
      if (d.text.trim() === "") errors[q.questionId] = shape === "secret" ? t("check.enterSecret") : t("check.enterAnswer");
    } else if (d.otherOn && d.text.trim() === "") {
      errors[q.questionId] = t("check.typeOther");
    } else if (d.choice.length === 0 && !d.otherOn) {
      errors[q.questionId] = shape === "multi" ? t("check.chooseAtLeastOne") : t("check.chooseOne");
    }
  }
  return errors;
}

/** The flat answer map `question.resolve` takes. */
export function buildAnswers(questions: readonly TQuestion[], drafts: Record<string, TDraft>): Record<string, string[]> {
  const answers: Record<string, string[]> = {};
  for (const q of questions) {
    const d = drafts[q.questionId] ?? initialDraft(q);
    switch (shapeOf(q)) {
      case "form":
        for (const f of q.fields ?? []) {
          if (f.multiple) {
            const chosen = d.many[f.name] ?? [];
            if (chosen.length > 0) answers[`${q.questionId}.${f.name}`] = [...chosen];
            continue;
          }
          const raw = d.fields[f.name] ?? "";
          const v = f.type === "string" ? raw : raw.trim();
          // Left empty: the server applies the default, or leaves an optional field out.
          if (v !== "") answers[`${q.questionId}.${f.name}`] = [f.format === "date-time" ? dateTimeValue(v) : v];
        }
        break;
      case "url":
        answers[q.questionId] = d.choice.slice(0, 1);
        break;
      case "text":
      case "secret":
        answers[q.questionId] = [d.text];
        break;
      case "single":
        answers[q.questionId] = d.otherOn ? [d.text.trim()] : d.choice.slice(0, 1);
        break;
      case "multi": {
        const values = [...d.choice];
        const other = d.text.trim();
        if (d.otherOn && other && !values.includes(other)) values.push(other);
        answers[q.questionId] = values;
        break;
      }
    }
  }
  return answers;
}

/** Is this answer key a secret (masked when typed, "stored" once answered)? */
export function isSecretKey(q: TQuestion, key: string): boolean {
  if (q.isSecret) return true;
  return Boolean(q.fields?.find((f) => `${q.questionId}.${f.name}` === key)?.secret);
}

/** One answered value as a person reads it: option labels, Yes/No, Confirmed / Declined. */
export type TShownAnswer = { label?: string; values: { text: string; stored?: boolean; other?: boolean }[] };

export function shownAnswers(q: TQuestion, answers: Record<string, string[]> | null | undefined, t: TQuestionTranslator = ENGLISH): TShownAnswer[] {
  const a = answers ?? {};
  const shape = shapeOf(q);
  const stored = (v: string, key: string) => v === STORED && isSecretKey(q, key);
  if (shape === "form") {
    return (q.fields ?? []).map((f) => {
      const key = `${q.questionId}.${f.name}`;
      const values = a[key] ?? [];
      return {
        label: fieldLabel(f),
        values:
          values.length === 0
            ? [{ text: t("shown.notGiven") }]
            : values.map((v) => (stored(v, key) ? { text: t("shown.stored"), stored: true } : { text: f.type === "boolean" ? (v === "true" ? t("shown.yes") : t("shown.no")) : f.type === "enum" ? enumLabel(f, v) : v })),
      };
    });
  }
  const values = a[q.questionId] ?? [];
  if (shape === "url") return [{ values: values.map((v) => ({ text: v === URL_CONFIRM ? t("shown.confirmed") : v === URL_DECLINE ? t("shown.declined") : v })) }];
  return [
    {
      values: values.map((v) => {
        if (stored(v, q.questionId)) return { text: t("shown.stored"), stored: true };
        const option = q.options.find((o) => optionValue(o) === v);
        return option ? { text: option.label } : { text: v, other: q.options.length > 0 };
      }),
    },
  ];
}

/** Splits a literal URL into what comes before its host, the host (with port), and the rest. */
export function splitUrl(literal: string): { before: string; host: string; after: string } {
  const scheme = literal.indexOf("://");
  if (scheme < 0) return { before: "", host: "", after: literal };
  const start = scheme + 3;
  const rest = literal.slice(start);
  const end = rest.search(/[/?#]/);
  const host = end < 0 ? rest : rest.slice(0, end);
  return { before: literal.slice(0, start), host, after: end < 0 ? "" : rest.slice(end) };
}

/** The hostname a browser would actually contact (IDN shown as punycode), or null. */
export function resolvedHostname(literal: string): string | null {
  try {
    return new URL(literal).hostname;
  } catch {
    return null;
  }
}
