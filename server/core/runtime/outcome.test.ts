import { describe, expect, test } from "vitest";
import { classifyTerminalOutcome } from "./outcome";

describe("classifyTerminalOutcome", () => {
  test.each([
    ["visible text", { visibleText: "Done." }, null],
    ["visible text beside reasoning and a plan", { visibleText: "Done.", reasoningText: "r", planText: "p" }, null],
    ["a prompt error", { visibleText: "", promptError: new Error("context too long") }, null],
    ["an in-flight turn", { visibleText: "", reasoningText: "thinking", inFlight: true }, null],
    ["NO_REPLY", { visibleText: "  NO_REPLY\n" }, null],
    ["the silentReply flag", { visibleText: "", reasoningText: "r", silentReply: true }, null],
    ["nothing at all", { visibleText: "" }, "empty"],
    ["whitespace only", { visibleText: " \n", reasoningText: "  ", planText: "" }, "empty"],
    ["reasoning without text", { visibleText: "", reasoningText: "I should check the files." }, "reasoning-only"],
    ["an explicit plan", { visibleText: "", planText: "1. read\n2. write" }, "planning-only"],
    ["a plan beside reasoning", { visibleText: "", reasoningText: "r", planText: "p" }, "planning-only"],
    ["plan-like reasoning prose (never inferred)", { visibleText: "", reasoningText: "Plan: 1. read 2. write" }, "reasoning-only"],
    ["a null promptError", { visibleText: "", promptError: null }, "empty"],
    ["lowercase no_reply is not silent", { visibleText: "no_reply" }, null],
    ["NO_REPLY inside prose is visible text", { visibleText: "NO_REPLY please" }, null],
  ] as const)("%s → %s", (_name, input, expected) => {
    expect(classifyTerminalOutcome(input)).toBe(expected);
  });
});
