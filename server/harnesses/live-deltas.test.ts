import { describe, expect, it, vi } from "vitest";
import { liveDeltas } from "./live-deltas";
import { toModelMessages, toolParameters } from "./openai-compatible";
import { z } from "zod";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("liveDeltas", () => {
  it("keeps order and kinds, batches, and never has two writes in flight", async () => {
    const written: Array<[string, string, string]> = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const live = liveDeltas(async (type, data) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await sleep(5);
      written.push([type, String(data.delta), String(data.occurrenceId)]);
      inFlight--;
    }, 3);
    for (const c of "thinking hard") live.stream.reasoning(c);
    for (let i = 0; i < 200; i++) live.stream.text(String(i % 10));
    await live.close();
    expect(maxInFlight).toBe(1);
    expect(written.filter((w) => w[0] === "response.thinking.delta").map((w) => w[1]).join("")).toBe("thinking hard");
    const text = written.filter((w) => w[0] === "response.text.delta");
    expect(text.map((w) => w[1]).join("")).toBe(Array.from({ length: 200 }, (_, i) => String(i % 10)).join(""));
    expect(text.length).toBeLessThanOrEqual(5);
    expect(written.findIndex((w) => w[0] === "response.text.delta")).toBeGreaterThan(0);
    expect(live.streamed).toEqual({ text: true, reasoning: true });
    expect(text[0]?.[2]).toMatch(/^occ_3_[0-9a-f]{12}$/);
  });

  it("a short delta goes out 50 ms after it was buffered; each try has a new occurrenceId", async () => {
    // On a fake clock: what is written is decided by which timers may fire, not by how fast this machine is.
    vi.useFakeTimers();
    const written: string[] = [];
    let live: ReturnType<typeof liveDeltas>;
    try {
      live = liveDeltas(async (_t, data) => {
        written.push(String(data.occurrenceId));
      }, 0);
      live.stream.text("hi");
      await vi.advanceTimersByTimeAsync(49);
      expect(written).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(written).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
    await live.close();
    const again = liveDeltas(async (_t, data) => {
      written.push(String(data.occurrenceId));
    }, 0);
    again.stream.text("hi");
    await again.close();
    expect(written[1]).not.toBe(written[0]);
  });

  it("a failed write stops the stream and close() throws it", async () => {
    let calls = 0;
    const live = liveDeltas(async () => {
      calls++;
      throw new Error("settled elsewhere");
    }, 0);
    live.stream.text("x".repeat(100));
    live.stream.text("more");
    await expect(live.close()).rejects.toThrow("settled elsewhere");
    expect(calls).toBe(1);
  });
});

describe("toModelMessages", () => {
  it("maps the loop's conversation; consecutive tool results share one tool message", () => {
    const messages = toModelMessages([
      { role: "user", content: { text: "hello" } },
      { role: "assistant", text: "", toolCalls: [{ id: "call_0_0", name: "echo", arguments: { text: "a" } }, { id: "call_0_1", name: "echo", arguments: "{bad" }] },
      { role: "tool", callId: "call_0_0", name: "echo", output: { text: "a" } },
      { role: "tool", callId: "call_0_1", name: "echo", output: { error: "Invalid arguments" } },
      { role: "user", content: "steered" },
    ]);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(messages[0]).toEqual({ role: "user", content: "hello" });
    expect(((messages[1]?.content ?? []) as Array<{ input?: unknown }>).map((p) => p.input)).toEqual([{ text: "a" }, {}]);
    expect(messages[2]?.content).toHaveLength(2);
  });

  it("derives tool parameters from zod (defaults optional, no $schema)", () => {
    const schema = toolParameters(z.strictObject({ a: z.string(), b: z.array(z.string()).default([]) }));
    expect(schema).toEqual({ type: "object", properties: { a: { type: "string" }, b: { default: [], type: "array", items: { type: "string" } } }, required: ["a"], additionalProperties: false });
  });
});
