import { type TAnswers, type TFormField, type TQuestion, URL_CONFIRM, URL_DECLINE, answerKeysOf } from "./schema";

export type TAnswerCheck = { ok: true; answers: TAnswers } | { ok: false; message: string };

const optionValue = (o: { label: string; value?: string }): string => o.value ?? o.label;

function checkField(field: TFormField, key: string, values: string[] | undefined): string | string[] | null {
  if (!values || values.length === 0 || (values.length === 1 && values[0] === "")) {
    if (field.default !== undefined) return [String(field.default)];
    return field.required ? `${key} is required` : null;
  }
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
    default:
      if (field.maxLength !== undefined && v.length > field.maxLength) return `${key} must be at most ${field.maxLength} characters`;
      return [v];
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
  if (unknown.length > 0) return { ok: false, message: `Unknown answer key${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}.` };
  const out: TAnswers = {};
  for (const q of questions) {
    if (q.fields) {
      for (const field of q.fields) {
        const key = `${q.questionId}.${field.name}`;
        const checked = checkField(field, key, answers[key]);
        if (typeof checked === "string") return { ok: false, message: `${checked}.` };
        if (checked) out[key] = checked;
      }
      continue;
    }
    const checked = checkQuestion(q, answers[q.questionId]);
    if (typeof checked === "string") return { ok: false, message: `${checked}.` };
    out[q.questionId] = checked;
  }
  return { ok: true, answers: out };
}
