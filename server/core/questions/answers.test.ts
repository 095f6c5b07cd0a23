import { describe, expect, test } from "vitest";
import { checkAnswers } from "./answers";
import { deriveQuestionId, type TQuestion, ZQuestion, ZQuestions } from "./schema";

const q = (over: Partial<TQuestion> & { questionId: string }): TQuestion => ZQuestion.parse({ header: "H", question: "Q?", ...over });

describe("question schema", () => {
  test("options are 0 or 2–4", () => {
    expect(ZQuestion.safeParse({ questionId: "a", header: "h", question: "q", options: [{ label: "x" }] }).success).toBe(false);
    expect(ZQuestion.safeParse({ questionId: "a", header: "h", question: "q", options: [{ label: "x" }, { label: "y" }] }).success).toBe(true);
    expect(ZQuestion.safeParse({ questionId: "a", header: "h", question: "q", options: Array.from({ length: 5 }, (_, i) => ({ label: `o${i}` })) }).success).toBe(false);
  });
  test("ids, headers and URL rules", () => {
    expect(ZQuestion.safeParse({ questionId: "Bad", header: "h", question: "q" }).success).toBe(false);
    expect(ZQuestion.safeParse({ questionId: "a", header: "thirteen chars", question: "q" }).success).toBe(false);
    expect(ZQuestion.safeParse({ questionId: "a", header: "h", question: "q", url: "https://user:pw@example.com/" }).success).toBe(false);
    expect(ZQuestion.safeParse({ questionId: "a", header: "h", question: "q", url: "ftp://example.com/" }).success).toBe(false);
    expect(ZQuestion.safeParse({ questionId: "a", header: "h", question: "q", url: "https://example.com/a?b=c#d" }).success).toBe(true);
    expect(ZQuestions.safeParse([]).success).toBe(false);
    expect(ZQuestions.safeParse([q({ questionId: "a" }), q({ questionId: "a" })]).success).toBe(false);
  });
  test("derived ids are stable per scope and call", () => {
    expect(deriveQuestionId("resp_1", "call_0_0")).toBe(deriveQuestionId("resp_1", "call_0_0"));
    expect(deriveQuestionId("resp_1", "call_0_0")).not.toBe(deriveQuestionId("resp_1", "call_0_1"));
    expect(deriveQuestionId("resp_1", "call_0_0")).toMatch(/^ask_[0-9a-f]{32}$/);
  });
});

describe("checkAnswers", () => {
  const choice = q({ questionId: "env", options: [{ label: "Staging", value: "staging" }, { label: "Prod", value: "prod" }] });
  test("single select takes exactly one known value", () => {
    expect(checkAnswers([choice], { env: ["staging"] })).toEqual({ ok: true, answers: { env: ["staging"] } });
    expect(checkAnswers([choice], { env: ["staging", "prod"] }).ok).toBe(false);
    expect(checkAnswers([choice], { env: ["qa"] }).ok).toBe(false);
    expect(checkAnswers([choice], {}).ok).toBe(false);
    expect(checkAnswers([choice], { env: ["prod"], other: ["x"] }).ok).toBe(false);
  });
  test("isOther admits free text, multiSelect admits several", () => {
    const other = q({ questionId: "env", isOther: true, multiSelect: true, options: choice.options });
    expect(checkAnswers([other], { env: ["staging", "qa box"] }).ok).toBe(true);
    expect(checkAnswers([other], { env: ["staging", "staging"] }).ok).toBe(false);
  });
  test("free text and URL confirmation", () => {
    expect(checkAnswers([q({ questionId: "why" })], { why: ["because"] }).ok).toBe(true);
    expect(checkAnswers([q({ questionId: "why" })], { why: [" "] }).ok).toBe(false);
    const url = q({ questionId: "open", url: "https://example.com/" });
    expect(checkAnswers([url], { open: ["confirm"] }).ok).toBe(true);
    expect(checkAnswers([url], { open: ["yes"] }).ok).toBe(false);
  });
  test("form fields are typed, required and defaulted", () => {
    const form = q({
      questionId: "deploy",
      presentation: "form",
      fields: [
        { name: "replicas", type: "integer", required: true, minimum: 1 },
        { name: "ratio", type: "number" },
        { name: "dry_run", type: "boolean", default: true },
        { name: "region", type: "enum", enum: ["eu", "us"], required: true },
      ],
    });
    expect(checkAnswers([form], { "deploy.replicas": ["3"], "deploy.region": ["eu"] })).toEqual({
      ok: true,
      answers: { "deploy.replicas": ["3"], "deploy.dry_run": ["true"], "deploy.region": ["eu"] },
    });
    expect(checkAnswers([form], { "deploy.replicas": ["3.5"], "deploy.region": ["eu"] }).ok).toBe(false);
    expect(checkAnswers([form], { "deploy.replicas": ["0"], "deploy.region": ["eu"] }).ok).toBe(false);
    expect(checkAnswers([form], { "deploy.replicas": ["2"], "deploy.region": ["asia"] }).ok).toBe(false);
    expect(checkAnswers([form], { "deploy.region": ["eu"] }).ok).toBe(false);
    expect(checkAnswers([form], { "deploy.replicas": ["2"], "deploy.region": ["eu"], "deploy.ratio": ["abc"] }).ok).toBe(false);
  });
});
