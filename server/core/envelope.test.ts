import { describe, expect, test } from "vitest";
import { buildEnvelope, outputTextOf, type TOutputItem } from "./envelope";

const items: TOutputItem[] = [
  { type: "thinking", text: "hmm" },
  { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello" }] },
  { type: "tool_call", id: "call_0_0", name: "echo", arguments: { text: "x" } },
  { type: "tool_result", callId: "call_0_0", name: "echo", output: { text: "x" } },
  { type: "message", role: "assistant", content: [{ type: "output_text", text: ", world" }] },
];
const base = { id: "resp_1", sessionId: "sess_1", output: items, metadata: {}, usage: { inputTokens: 0, outputTokens: 3 } };

describe("envelope", () => {
  test("outputText joins message text in order and ignores other items", () => {
    expect(outputTextOf(items)).toBe("Hello, world");
  });
  test("completed carries output and text", () => {
    const e = buildEnvelope({ ...base, status: "completed" });
    expect(e.outputText).toBe("Hello, world");
    expect(e.output).toHaveLength(5);
    expect(e.error).toBeUndefined();
  });
  test.each(["in_progress", "requires_action", "denied", "cancelled", "failed"] as const)("%s carries no output", (status) => {
    const e = buildEnvelope({ ...base, status });
    expect(e.outputText).toBe("");
    expect(e.output).toEqual([]);
  });
  test("failed always carries an error", () => {
    expect(buildEnvelope({ ...base, status: "failed" }).error).toEqual({ code: "failed", message: "The response failed." });
    expect(buildEnvelope({ ...base, status: "failed", error: { code: "x", message: "y" } }).error).toEqual({ code: "x", message: "y" });
  });
  test("requiredAction only on requires_action", () => {
    const action = { type: "client_tool" as const, id: "c", callId: "resp_1", name: "n", arguments: {}, expiresAt: "t" };
    expect(buildEnvelope({ ...base, status: "requires_action", requiredAction: action }).requiredAction).toEqual(action);
    expect(buildEnvelope({ ...base, status: "completed", requiredAction: action }).requiredAction).toBeUndefined();
  });
});
