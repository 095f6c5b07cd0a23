import { describe, expect, test } from "vitest";
import { checkAnswers } from "./answers";
import { type TQuestion, ZQuestion } from "./schema";
import { compileSchema, typedValues } from "./structured";

/** The form question an MCP elicitation of `properties` becomes (validated like any question). */
function formOf(properties: Record<string, unknown>, required: string[] = []): TQuestion {
  const compiled = compileSchema({ type: "object", properties, required });
  if (!compiled.ok) throw new Error(compiled.reason);
  return ZQuestion.parse({ questionId: "form", header: "test", question: "Fill in", presentation: "form", fields: compiled.fields });
}

const answer = (q: TQuestion, values: Record<string, string[]>) =>
  checkAnswers([q], Object.fromEntries(Object.entries(values).map(([k, v]) => [`form.${k}`, v])));

describe("MCP elicitation forms (protocol 2025-11-25)", () => {
  test("a titled single-select (oneOf of const/title) shows titles and answers with the value", () => {
    const q = formOf({ size: { type: "string", title: "Size", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }], default: "s" } });
    expect(q.fields?.[0]).toMatchObject({ type: "enum", enum: ["s", "l"], enumTitles: ["Small", "Large"], default: "s" });
    expect(answer(q, { size: ["l"] })).toEqual({ ok: true, answers: { "form.size": ["l"] } });
    expect(answer(q, { size: ["Large"] })).toEqual({ ok: false, message: 'form.size must be one of s, l.', key: "form.size" });
    expect(typedValues(q, { "form.size": ["l"] })).toEqual({ size: "l" });
  });

  test("legacy enumNames title the enum values; a count mismatch is refused with its reason", () => {
    const q = formOf({ tier: { type: "string", enum: ["a", "b"], enumNames: ["Alpha", "Beta"] } });
    expect(q.fields?.[0]).toMatchObject({ enum: ["a", "b"], enumTitles: ["Alpha", "Beta"] });
    expect(compileSchema({ type: "object", properties: { tier: { type: "string", enum: ["a", "b"], enumNames: ["Alpha"] } } })).toEqual({
      ok: false,
      reason: "Field tier: enumNames needs one name per enum value.",
    });
  });

  test("a multi-select (array of enum, or titled anyOf) takes several distinct values within minItems..maxItems", () => {
    const plain = formOf({ tags: { type: "array", items: { type: "string", enum: ["x", "y", "z"] }, minItems: 1, maxItems: 2 } }, ["tags"]);
    expect(plain.fields?.[0]).toMatchObject({ type: "enum", multiple: true, enum: ["x", "y", "z"], minItems: 1, maxItems: 2 });
    expect(answer(plain, { tags: ["x", "z"] })).toEqual({ ok: true, answers: { "form.tags": ["x", "z"] } });
    expect(answer(plain, { tags: ["x", "y", "z"] })).toEqual({ ok: false, message: "form.tags takes at most 2 values.", key: "form.tags" });
    expect(answer(plain, { tags: ["x", "x"] })).toEqual({ ok: false, message: "form.tags has repeated values.", key: "form.tags" });
    expect(answer(plain, { tags: ["w"] })).toEqual({ ok: false, message: 'form.tags: "w" is not one of x, y, z.', key: "form.tags" });
    expect(answer(plain, {})).toEqual({ ok: false, message: "form.tags is required.", key: "form.tags" });
    expect(typedValues(plain, { "form.tags": ["x", "z"] })).toEqual({ tags: ["x", "z"] });

    const titled = formOf({ pets: { type: "array", items: { anyOf: [{ const: "cat", title: "Cat" }, { const: "dog", title: "Dog" }] }, default: ["dog"] } });
    expect(titled.fields?.[0]).toMatchObject({ multiple: true, enum: ["cat", "dog"], enumTitles: ["Cat", "Dog"], default: ["dog"] });
    // Left empty, the default holds; an optional multi-select may be answered with nothing.
    expect(answer(titled, {})).toEqual({ ok: true, answers: { "form.pets": ["dog"] } });
    const optional = formOf({ pets: { type: "array", items: { type: "string", enum: ["cat", "dog"] } } });
    expect(answer(optional, {})).toEqual({ ok: true, answers: { "form.pets": [] } });
    expect(typedValues(optional, { "form.pets": [] })).toEqual({ pets: [] });
  });

  test("string formats are checked: email, uri, date, date-time", () => {
    const q = formOf({
      mail: { type: "string", format: "email" },
      site: { type: "string", format: "uri" },
      day: { type: "string", format: "date" },
      at: { type: "string", format: "date-time" },
    });
    expect(q.fields?.map((f) => f.format)).toEqual(["email", "uri", "date", "date-time"]);
    expect(answer(q, { mail: ["ada@example.com"], site: ["https://example.com/x"], day: ["2026-12-01"], at: ["2026-12-01T09:30:00Z"] }).ok).toBe(true);
    expect(answer(q, { mail: ["ada at example"] })).toEqual({ ok: false, message: "form.mail must be an email address.", key: "form.mail" });
    expect(answer(q, { site: ["not a uri"] })).toEqual({ ok: false, message: "form.site must be an absolute URI such as https://example.com/.", key: "form.site" });
    expect(answer(q, { day: ["2026-02-30"] })).toEqual({ ok: false, message: "form.day must be a date (YYYY-MM-DD).", key: "form.day" });
    expect(answer(q, { at: ["2026-12-01 09:30"] })).toEqual({ ok: false, message: "form.at must be a date and time with a time zone (e.g. 2026-12-01T09:30:00Z).", key: "form.at" });
  });

  test("length and range constraints are kept and checked", () => {
    const q = formOf({ code: { type: "string", minLength: 3, maxLength: 5 }, n: { type: "integer", minimum: 1, maximum: 9 } });
    expect(q.fields).toMatchObject([{ minLength: 3, maxLength: 5 }, { minimum: 1, maximum: 9 }]);
    expect(answer(q, { code: ["ab"] })).toEqual({ ok: false, message: "form.code must be at least 3 characters.", key: "form.code" });
    expect(answer(q, { code: ["abcdef"] })).toEqual({ ok: false, message: "form.code must be at most 5 characters.", key: "form.code" });
    expect(answer(q, { n: ["10"] })).toEqual({ ok: false, message: "form.n must be at most 9.", key: "form.n" });
    expect(answer(q, { code: ["abcd"], n: ["3"] })).toEqual({ ok: true, answers: { "form.code": ["abcd"], "form.n": ["3"] } });
  });

  test("what is outside the subset is declined with a reason naming the field", () => {
    const reason = (properties: Record<string, unknown>) => {
      const compiled = compileSchema({ type: "object", properties });
      return compiled.ok ? null : compiled.reason;
    };
    expect(reason({ when: { type: "string", format: "time" } })).toBe('Field when has format "time"; a form checks only email, uri, date, date-time.');
    expect(reason({ address: { type: "object", properties: {} } })).toBe('Field address has type "object", which a form cannot show.');
    expect(reason({ nums: { type: "array", items: { type: "integer" } } })).toBe("Field nums: a list can only be a multi-select of string choices.");
    expect(reason({ pick: { type: "string", oneOf: [{ type: "string" }] } })).toBe("Field pick: only a list of {const, title} choices can stand for an enum.");
    expect(reason({ tags: { type: "array", items: { type: "string", enum: ["a"] }, minItems: 3, maxItems: 1 } })).toBe("Field tags: minItems is larger than maxItems.");
  });
});
