/** One field of an edit form generated from a tool's argument schema. */
export type TSchemaField = {
  name: string;
  kind: "text" | "long-text" | "integer" | "number" | "boolean" | "choice";
  required: boolean;
  description: string | null;
  /** The allowed values of a `choice` (an enum of strings). */
  choices: string[];
  min: number | null;
  max: number | null;
  maxLength: number | null;
};

/** A form for the schema's top-level properties, or null when some property has no field kind (the raw JSON is then the editor). */
export type TSchemaForm = { fields: TSchemaField[] } | null;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** Strings that may be long (commands, scripts) get a text area. */
const LONG_TEXT = 200;

function fieldOf(name: string, schema: unknown, required: boolean): TSchemaField | null {
  if (!isObject(schema)) return null;
  const base = { name, required, description: typeof schema.description === "string" ? schema.description : null, choices: [], min: null, max: null, maxLength: null };
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every((v) => typeof v === "string")) return { ...base, kind: "choice", choices: schema.enum as string[] };
  switch (schema.type) {
    case "string": {
      const maxLength = num(schema.maxLength);
      return { ...base, kind: maxLength === null || maxLength > LONG_TEXT ? "long-text" : "text", maxLength };
    }
    case "integer":
    case "number":
      return { ...base, kind: schema.type, min: num(schema.minimum), max: num(schema.maximum) };
    case "boolean":
      return { ...base, kind: "boolean" };
    default:
      return null;
  }
}

/**
 * The edit form of a tool's JSON argument schema: one field per top-level property (text, number,
 * yes/no, a choice). Nested objects, arrays and unions have no field here: the whole form is then
 * null and the person edits the raw JSON, which is always available too.
 */
export function schemaForm(schema: unknown): TSchemaForm {
  if (!isObject(schema) || schema.type !== "object" || !isObject(schema.properties)) return null;
  const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : [];
  const fields: TSchemaField[] = [];
  for (const [name, property] of Object.entries(schema.properties)) {
    const field = fieldOf(name, property, required.includes(name));
    if (!field) return null;
    fields.push(field);
  }
  return fields.length > 0 ? { fields } : null;
}

/** The text a field shows for an argument value ("" for absent). */
export function fieldText(field: TSchemaField, value: unknown): string {
  if (value === undefined || value === null) return "";
  if (field.kind === "boolean") return value === true ? "true" : "false";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The arguments after one field changed to `text`: an empty optional field is left out; a number
 * field keeps what was typed as a number when it is one (the server checks the schema again).
 */
export function withField(args: Record<string, unknown>, field: TSchemaField, text: string): Record<string, unknown> {
  const { [field.name]: _old, ...rest } = args;
  if (text === "" && !field.required) return rest;
  let value: unknown = text;
  if (field.kind === "integer" || field.kind === "number") value = text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text;
  if (field.kind === "boolean") value = text === "true";
  // Keep the property order of the arguments as requested.
  return field.name in args ? Object.fromEntries(Object.entries(args).map(([k, v]) => [k, k === field.name ? value : v])) : { ...args, [field.name]: value };
}
