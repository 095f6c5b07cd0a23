import { describe, expect, test } from "vitest";
import { z } from "zod";
import { argumentsJsonSchema } from "../../server/tools/arguments-json-schema";
import { fieldText, schemaForm, withField } from "./schema-form";

const exec = argumentsJsonSchema(
  z.strictObject({
    command: z.string().min(1).max(16_384),
    cwd: z.string().min(1).max(4096).optional(),
    timeoutMs: z.number().int().min(1).max(600_000).optional(),
  }),
);

describe("schemaForm", () => {
  test("the exec tool's schema becomes a long text, a text and an integer field", () => {
    const form = schemaForm(exec);
    expect(form?.fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ["command", "long-text", true],
      ["cwd", "long-text", false],
      ["timeoutMs", "integer", false],
    ]);
    expect(form?.fields[2]).toMatchObject({ min: 1, max: 600_000 });
  });

  test("enums become choices, booleans yes/no, short strings a text field", () => {
    const form = schemaForm(argumentsJsonSchema(z.object({ mode: z.enum(["fast", "safe"]), dry: z.boolean(), name: z.string().max(40) })));
    expect(form?.fields.map((f) => [f.name, f.kind, f.choices])).toEqual([
      ["mode", "choice", ["fast", "safe"]],
      ["dry", "boolean", []],
      ["name", "text", []],
    ]);
  });

  test("a nested object or array has no field: the raw JSON is the editor", () => {
    expect(schemaForm(argumentsJsonSchema(z.object({ env: z.record(z.string(), z.string()) })))).toBeNull();
    expect(schemaForm(argumentsJsonSchema(z.object({ args: z.array(z.string()) })))).toBeNull();
    expect(schemaForm({ type: "object", properties: {} })).toBeNull();
    expect(schemaForm(null)).toBeNull();
  });
});

describe("withField", () => {
  const [command, cwd, timeoutMs] = schemaForm(exec)?.fields ?? [];
  if (!command || !cwd || !timeoutMs) throw new Error("exec form");

  test("changes a value in place, keeping the requested order", () => {
    expect(Object.keys(withField({ command: "ls", cwd: "a" }, command, "ls -la"))).toEqual(["command", "cwd"]);
    expect(withField({ command: "ls", cwd: "a" }, command, "ls -la")).toEqual({ command: "ls -la", cwd: "a" });
  });

  test("an empty optional field is left out; a required one stays (the server says it must not be empty)", () => {
    expect(withField({ command: "ls", cwd: "a" }, cwd, "")).toEqual({ command: "ls" });
    expect(withField({ command: "ls" }, command, "")).toEqual({ command: "" });
  });

  test("numbers are numbers; what is not a number is sent as typed for the server to refuse", () => {
    expect(withField({ command: "ls" }, timeoutMs, "5000")).toEqual({ command: "ls", timeoutMs: 5000 });
    expect(withField({ command: "ls" }, timeoutMs, "soon")).toEqual({ command: "ls", timeoutMs: "soon" });
    expect(fieldText(timeoutMs, 5000)).toBe("5000");
    expect(fieldText(cwd, undefined)).toBe("");
  });
});
