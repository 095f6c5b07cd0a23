import { type TAnswers, type TFormField, type TQuestion, URL_CONFIRM, URL_DECLINE, answerKeysOf } from "./schema";

/** A refusal names the answer key it is about (the unknown keys, comma-separated, for unknown ones). */
export type TAnswerCheck = { ok: true; answers: TAnswers } | { ok: false; message: string; key: string };

const optionValue = (o: { label: string; value?: string }): string => o.value ?? o.label;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** A real calendar date (no 2026-02-30). */
const isDate = (v: string): boolean => {
  const m = DATE.exec(v);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
};

const isUri = (v: string): boolean => {
  if (/\s/.test(v)) return false;
  try {
    return new URL(v).protocol.length > 1;
  } catch {
    return false;
  }
};

/** Why `v` is not of `format`, or null. */
function formatProblem(format: NonNullable<TFormField["format"]>, key: string, v: string): string | null {
  if (format === "email") return EMAIL.test(v) ? null : `${key} must be an email address`;
  if (format === "uri") return isUri(v) ? null : `${key} must be an absolute URI such as https://example.com/`;
  if (format === "date") return isDate(v) ? null : `${key} must be a date (YYYY-MM-DD)`;
  return DATE_TIME.test(v) && isDate(v.slice(0, 10)) && Number.isFinite(Date.parse(v)) ? null : `${key} must be a date and time with a time zone (e.g. 2026-12-01T09:30:00Z)`;
}

/** A multi-select: distinct values of the enum, between minItems and maxItems. */
function checkMany(field: TFormField, key: string, values: string[]): string | string[] {
  if (new Set(values).size !== values.length) return `${key} has repeated values`;
  const bad = values.find((v) => !field.enum?.includes(v));
  if (bad !== undefined) return `${key}: ${JSON.stringify(bad)} is not one of ${field.enum?.join(", ")}`;
  if (field.minItems !== undefined && values.length < field.minItems) return `${key} takes at least ${field.minItems} value${field.minItems === 1 ? "" : "s"}`;
  if (field.maxItems !== undefined && values.length > field.maxItems) return `${key} takes at most ${field.maxItems} value${field.maxItems === 1 ? "" : "s"}`;
  return values;
}

function checkField(field: TFormField, key: string, values: string[] | undefined): string | string[] | null {
  if (!values || values.length === 0 || (values.length === 1 && values[0] === "")) {
    if (field.default !== undefined) return Array.isArray(field.default) ? field.default : [String(field.default)];
    if (field.multiple && !field.required && !field.minItems) return [];
    return field.required || field.minItems ? `${key} is required` : null;
  }
  if (field.multiple) return checkMany(field, key, values);
  if (values.length !== 1) return `${key} takes exactly one value`;
  const v = values[0] as string;
  switch (field.type) {
    case "number":
    case "integer": {
      const n = Number(v);
      if (v.trim() === "" || !Number.isFinite(n)) return `${key} must be a number`;
      if (field.type === "integer" && !Number.isInteger(n)) return `${key} must be a whole number`;
      if (field.minimum !== undefined && n < field.minimum) return `${key} must be at least ${field.minimum}`;
      if (field.maximum !== undefined && n > field.maximum) return `${key} must be at most ${field.maximum}`;
      return [String(n)];
    }
    case "boolean":
      return v === "true" || v === "false" ? [v] : `${key} must be true or false`;
    case "enum":
      return field.enum?.includes(v) ? [v] : `${key} must be one of ${field.enum?.join(", ")}`;
    default: {
      if (field.maxLength !== undefined && v.length > field.maxLength) return `${key} must be at most ${field.maxLength} characters`;
      if (field.minLength !== undefined && v.length < field.minLength) return `${key} must be at least ${field.minLength} characters`;
      const problem = field.format ? formatProblem(field.format, key, v) : null;
      return problem ?? [v];
    }
  }
}

function checkQuestion(q: TQuestion, values: string[] | undefined): string | string[] {
  const key = q.questionId;
  if (!values || values.length === 0) return `${key} needs an answer`;
  if (q.url) {
    return values.length === 1 && (values[0] === URL_CONFIRM || values[0] === URL_DECLINE) ? values : `${key} takes "${URL_CONFIRM}" or "${URL_DECLINE}"`;
  }
  if (q.options.length === 0) {
    if (values.length !== 1 || (values[0] ?? "").trim() === "") return `${key} takes exactly one non-empty text answer`;
    return values;
  }
  const allowed = new Set(q.options.map(optionValue));
  if (!q.multiSelect && values.length !== 1) return `${key} is single-select and takes exactly one value`;
  if (new Set(values).size !== values.length) return `${key} has repeated values`;
  for (const v of values) {
    if (allowed.has(v)) continue;
    if (q.isOther && v.trim() !== "") continue;
    return `${key}: ${JSON.stringify(v)} is not one of the options`;
  }
  return values;
}

/** Checks answers against the questions; unknown keys, missing answers and bad values are refused. */
export function checkAnswers(questions: readonly TQuestion[], answers: TAnswers): TAnswerCheck {
  const known = new Set(questions.flatMap(answerKeysOf));
  const unknown = Object.keys(answers).filter((k) => !known.has(k));
  if (unknown.length > 0) return { ok: false, message: `Unknown answer key${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}.`, key: unknown.join(", ") };
  const out: TAnswers = {};
  for (const q of questions) {
    if (q.fields) {
      for (const field of q.fields) {
        const key = `${q.questionId}.${field.name}`;
        const checked = checkField(field, key, answers[key]);
        if (typeof checked === "string") return { ok: false, message: `${checked}.`, key };
        if (checked) out[key] = checked;
      }
      continue;
    }
    const checked = checkQuestion(q, answers[q.questionId]);
    if (typeof checked === "string") return { ok: false, message: `${checked}.`, key: q.questionId };
    out[q.questionId] = checked;
  }
  return { ok: true, answers: out };
}
