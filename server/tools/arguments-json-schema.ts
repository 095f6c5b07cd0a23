import { z } from "zod";

const cache = new WeakMap<z.ZodType, Record<string, unknown>>();

/**
 * The JSON Schema of a tool's arguments (from its zod schema, as input): what the model is given
 * and what the console builds its edit form from. Always an object schema; cached per schema.
 */
export function argumentsJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const known = cache.get(schema);
  if (known) return known;
  let json: Record<string, unknown>;
  try {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    json = rest.type === "object" ? rest : { type: "object", properties: {} };
  } catch {
    json = { type: "object", properties: {} };
  }
  cache.set(schema, json);
  return json;
}

/**
 * The zod schema of arguments given as a JSON Schema (an MCP tool's `inputSchema`, a native tool's
 * `parameters`): what edits and calls are validated with. Null when zod cannot read it or it does
 * not describe an object (tool arguments are one).
 */
export function argsSchemaFromJson(json: unknown): z.ZodType | null {
  try {
    const converted = z.fromJSONSchema(json as Parameters<typeof z.fromJSONSchema>[0]);
    if (converted.safeParse([]).success === false && converted.safeParse("x").success === false) return converted;
  } catch {}
  return null;
}
