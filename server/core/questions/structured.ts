import type { TFormField, TQuestion } from "./schema";

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

/**
 * Compiles a JSON schema of primitive fields (string, number, integer, boolean, string enums,
 * with defaults and required) into form fields. Anything it cannot represent (nested objects,
 * arrays, unions, references, too many fields) makes the whole schema unsupported — decided
 * before anything is shown.
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
    if (prop.$ref || prop.anyOf || prop.oneOf || prop.allOf) return { ok: false, reason: `Field ${key} uses a composition this form cannot show.` };
    const base = {
      name,
      label: typeof prop.title === "string" ? prop.title.slice(0, 120) : key.slice(0, 120),
      ...(typeof prop.description === "string" ? { description: prop.description.slice(0, 500) } : {}),
      ...(required.has(key) ? { required: true } : {}),
      ...(prop.format === "password" || prop.writeOnly === true || prop["x-secret"] === true ? { secret: true } : {}),
    };
    const dflt = prop.default;
    if (Array.isArray(prop.enum)) {
      const values = prop.enum.filter((e): e is string => typeof e === "string");
      if (values.length !== prop.enum.length || values.length === 0) return { ok: false, reason: `Field ${key}: only string enums are supported.` };
      fields.push({ ...base, type: "enum", enum: values, ...(typeof dflt === "string" && values.includes(dflt) ? { default: dflt } : {}) });
      continue;
    }
    if (prop.type === "string") fields.push({ ...base, type: "string", ...(typeof dflt === "string" ? { default: dflt } : {}), ...(typeof prop.maxLength === "number" ? { maxLength: Math.max(1, Math.min(10_000, Math.trunc(prop.maxLength))) } : {}) });
    else if (prop.type === "number" || prop.type === "integer") {
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
    if (raw === undefined) continue;
    if (raw === "stored" && field.secret) out[field.name] = "stored";
    else if (field.type === "number" || field.type === "integer") out[field.name] = Number(raw);
    else if (field.type === "boolean") out[field.name] = raw === "true";
    else out[field.name] = raw;
  }
  return out;
}
