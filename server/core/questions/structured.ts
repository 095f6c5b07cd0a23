import { FIELD_FORMATS, type TFormField, type TQuestion } from "./schema";

const LIMITS = { depth: 6, keys: 200, stringLength: 4000, arrayLength: 100 };

/**
 * Copies plain own data of an untrusted value, bounded in depth, keys and sizes. Accessors are
 * never invoked (their descriptors are skipped), so a hostile getter cannot run or change the
 * snapshot between check and use. Returns undefined for what it cannot copy.
 */
export function snapshotBounded(value: unknown, depth = 0, budget = { keys: LIMITS.keys }): unknown {
  if (value === null || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value === "string") return value.length > LIMITS.stringLength ? value.slice(0, LIMITS.stringLength) : value;
  if (typeof value !== "object" || depth >= LIMITS.depth) return undefined;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    const length = Math.min(Object.getOwnPropertyDescriptor(value, "length")?.value ?? 0, LIMITS.arrayLength);
    for (let i = 0; i < length; i++) {
      const d = Object.getOwnPropertyDescriptor(value, String(i));
      out.push(d && "value" in d ? snapshotBounded(d.value, depth + 1, budget) : undefined);
    }
    return out;
  }
  // No prototype: a key named "__proto__" stays a plain own key, and nothing is ever inherited.
  const out: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(value)) {
    if (budget.keys-- <= 0) break;
    const d = Object.getOwnPropertyDescriptor(value, key);
    if (!d || !("value" in d)) continue;
    const copied = snapshotBounded(d.value, depth + 1, budget);
    if (copied !== undefined) out[key] = copied;
  }
  return out;
}

export type TCompiled = { ok: true; fields: TFormField[] } | { ok: false; reason: string };

const fieldName = (key: string): string | null => {
  const name = key.toLowerCase().replace(/[^a-z0-9_]/g, "_").replace(/^[^a-z]+/, "");
  return /^[a-z][a-z0-9_]*$/.test(name) && name.length <= 64 ? name : null;
};

/** `[{const, title}]` as values and titles, or null when it is anything else. */
function titledChoices(list: unknown): { values: string[]; titles: string[] } | null {
  if (!Array.isArray(list) || list.length === 0) return null;
  const values: string[] = [];
  const titles: string[] = [];
  for (const item of list) {
    const c = item as { const?: unknown; title?: unknown } | null;
    if (!c || typeof c !== "object" || typeof c.const !== "string" || c.const === "") return null;
    values.push(c.const);
    titles.push(typeof c.title === "string" && c.title ? c.title.slice(0, 200) : c.const);
  }
  return { values, titles };
}

/** The choices of an enum property in any of MCP's spellings: `enum` (+ legacy `enumNames`), or `oneOf`/`anyOf` of `{const, title}`. */
function choicesOf(prop: Record<string, unknown>, key: string): { values: string[]; titles?: string[] } | { reason: string } | null {
  if (Array.isArray(prop.enum)) {
    const values = prop.enum.filter((e): e is string => typeof e === "string" && e !== "");
    if (values.length !== prop.enum.length || values.length === 0) return { reason: `Field ${key}: only non-empty string enums are supported.` };
    if (prop.enumNames === undefined) return { values };
    const names = prop.enumNames;
    if (!Array.isArray(names) || names.length !== values.length || names.some((n) => typeof n !== "string")) return { reason: `Field ${key}: enumNames needs one name per enum value.` };
    return { values, titles: (names as string[]).map((n, i) => n.slice(0, 200) || (values[i] as string)) };
  }
  const titled = prop.oneOf ?? prop.anyOf;
  if (titled === undefined) return null;
  const choices = titledChoices(titled);
  return choices ?? { reason: `Field ${key}: only a list of {const, title} choices can stand for an enum.` };
}

const withTitles = (c: { values: string[]; titles?: string[] }) => ({ enum: c.values, ...(c.titles?.some((t, i) => t !== c.values[i]) ? { enumTitles: c.titles } : {}) });
const MAX_CHOICES = 50;

/**
 * Compiles a JSON schema of primitive fields into form fields: the subset MCP elicitation
 * (protocol 2025-11-25) defines, all of it: strings (with `minLength`/`maxLength` and the
 * formats email, uri, date, date-time), numbers and integers (with `minimum`/`maximum`),
 * booleans, single-select enums (plain, with legacy `enumNames`, or titled `oneOf` of
 * `{const, title}`) and multi-select enums (`type: "array"` of an enum or titled `anyOf`, with
 * `minItems`/`maxItems`), with defaults and required. Anything else (nested objects, other
 * arrays, references, other formats, too many fields) makes the whole schema unsupported, with a
 * reason naming the field — decided before anything is shown.
 */
export function compileSchema(raw: unknown): TCompiled {
  const schema = snapshotBounded(raw) as Record<string, unknown> | undefined;
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return { ok: false, reason: "The schema is not an object." };
  if (schema.type !== "object" || typeof schema.properties !== "object" || schema.properties === null) return { ok: false, reason: 'Only schemas of type "object" with properties are supported.' };
  const properties = Object.entries(schema.properties as Record<string, unknown>);
  if (properties.length === 0 || properties.length > 20) return { ok: false, reason: "A form needs 1 to 20 fields." };
  const required = new Set(Array.isArray(schema.required) ? (schema.required as unknown[]).filter((r): r is string => typeof r === "string") : []);
  const fields: TFormField[] = [];
  for (const [key, value] of properties) {
    const prop = value as Record<string, unknown>;
    const name = fieldName(key);
    if (!name || typeof prop !== "object" || prop === null) return { ok: false, reason: `Field ${key} cannot be represented.` };
    if (fields.some((f) => f.name === name)) return { ok: false, reason: `Field ${key} has the same form name as another field.` };
    if (prop.$ref || prop.allOf) return { ok: false, reason: `Field ${key} uses a composition this form cannot show.` };
    const base = {
      name,
      label: typeof prop.title === "string" ? prop.title.slice(0, 120) : key.slice(0, 120),
      ...(typeof prop.description === "string" ? { description: prop.description.slice(0, 500) } : {}),
      ...(required.has(key) ? { required: true } : {}),
      ...(prop.format === "password" || prop.writeOnly === true || prop["x-secret"] === true ? { secret: true } : {}),
    };
    const dflt = prop.default;
    if (prop.type === "array") {
      const items = prop.items as Record<string, unknown> | undefined;
      const choices = items && typeof items === "object" ? choicesOf(items, key) : null;
      if (!choices) return { ok: false, reason: `Field ${key}: a list can only be a multi-select of string choices.` };
      if ("reason" in choices) return { ok: false, reason: choices.reason };
      if (choices.values.length > MAX_CHOICES) return { ok: false, reason: `Field ${key} offers more than ${MAX_CHOICES} choices.` };
      const minItems = typeof prop.minItems === "number" ? Math.max(0, Math.min(MAX_CHOICES, Math.trunc(prop.minItems))) : undefined;
      const maxItems = typeof prop.maxItems === "number" ? Math.max(1, Math.min(MAX_CHOICES, Math.trunc(prop.maxItems))) : undefined;
      if (minItems !== undefined && maxItems !== undefined && minItems > maxItems) return { ok: false, reason: `Field ${key}: minItems is larger than maxItems.` };
      const defaults = Array.isArray(dflt) && dflt.every((d) => typeof d === "string" && choices.values.includes(d)) ? { default: dflt as string[] } : {};
      fields.push({ ...base, type: "enum", multiple: true, ...withTitles(choices), ...(minItems !== undefined ? { minItems } : {}), ...(maxItems !== undefined ? { maxItems } : {}), ...defaults });
      continue;
    }
    const choices = choicesOf(prop, key);
    if (choices) {
      if ("reason" in choices) return { ok: false, reason: choices.reason };
      if (choices.values.length > MAX_CHOICES) return { ok: false, reason: `Field ${key} offers more than ${MAX_CHOICES} choices.` };
      fields.push({ ...base, type: "enum", ...withTitles(choices), ...(typeof dflt === "string" && choices.values.includes(dflt) ? { default: dflt } : {}) });
      continue;
    }
    if (prop.type === "string") {
      const format = prop.format;
      if (format !== undefined && format !== "password" && !(FIELD_FORMATS as readonly unknown[]).includes(format)) {
        return { ok: false, reason: `Field ${key} has format ${JSON.stringify(format)}; a form checks only ${FIELD_FORMATS.join(", ")}.` };
      }
      const minLength = typeof prop.minLength === "number" ? Math.max(0, Math.min(10_000, Math.trunc(prop.minLength))) : undefined;
      const maxLength = typeof prop.maxLength === "number" ? Math.max(1, Math.min(10_000, Math.trunc(prop.maxLength))) : undefined;
      if (minLength !== undefined && maxLength !== undefined && minLength > maxLength) return { ok: false, reason: `Field ${key}: minLength is larger than maxLength.` };
      fields.push({
        ...base,
        type: "string",
        ...(typeof dflt === "string" ? { default: dflt } : {}),
        ...(minLength ? { minLength } : {}),
        ...(maxLength !== undefined ? { maxLength } : {}),
        ...(format !== undefined && format !== "password" ? { format: format as (typeof FIELD_FORMATS)[number] } : {}),
      });
    } else if (prop.type === "number" || prop.type === "integer") {
      fields.push({
        ...base,
        type: prop.type,
        ...(typeof dflt === "number" ? { default: dflt } : {}),
        ...(typeof prop.minimum === "number" ? { minimum: prop.minimum } : {}),
        ...(typeof prop.maximum === "number" ? { maximum: prop.maximum } : {}),
      });
    } else if (prop.type === "boolean") fields.push({ ...base, type: "boolean", ...(typeof dflt === "boolean" ? { default: dflt } : {}) });
    else return { ok: false, reason: `Field ${key} has type ${JSON.stringify(prop.type)}, which a form cannot show.` };
  }
  return { ok: true, fields };
}

/** Turns answered form values back into typed values (secrets stay "stored"). */
export function typedValues(question: TQuestion, answers: Record<string, string[]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of question.fields ?? []) {
    const raw = answers[`${question.questionId}.${field.name}`]?.[0];
    if (field.multiple) {
      const many = answers[`${question.questionId}.${field.name}`];
      if (many) out[field.name] = [...many];
      continue;
    }
    if (raw === undefined) continue;
    if (raw === "stored" && field.secret) out[field.name] = "stored";
    else if (field.type === "number" || field.type === "integer") out[field.name] = Number(raw);
    else if (field.type === "boolean") out[field.name] = raw === "true";
    else out[field.name] = raw;
  }
  return out;
}
