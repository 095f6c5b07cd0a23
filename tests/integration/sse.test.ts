import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, execTurn, expectError, expectWellFormedSse, lineCount, ok200, readSse, script, type TSseEvent, workspaceOf } from "./helpers";

let app: TTestApp;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  // Starts runs and decides them: an operator may approve its own (separation of duties is tested elsewhere).
  operator = await app.user("operator");
});
afterAll(async () => {
  await app?.close();
});

const stream = async (input: unknown, extra: Record<string, unknown> = {}) => {
  const res = await app.api("/v1/responses", { key: operator.apiKey, body: { input, stream: true, ...extra } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const sse = readSse(res);
  await sse.done;
  expect(sse.failure()).toBeNull();
  const created = sse.events[0]?.data as { responseId: string; sessionId: string };
  return { events: sse.events, responseId: created.responseId, sessionId: created.sessionId };
};

const events = (responseId: string, sessionId: string, opts: { after?: number; lastEventId?: number; key?: string } = {}) =>
  app.api(`/v1/responses/${responseId}/events?sessionId=${sessionId}${opts.after !== undefined ? `&after=${opts.after}` : ""}`, {
    key: opts.key ?? operator.apiKey,
    headers: opts.lastEventId !== undefined ? { "last-event-id": String(opts.lastEventId) } : {},
  });

const expectConsecutive = (list: TSseEvent[], from: number) => expect(list.map((e) => e.data.sequence)).toEqual(list.map((_, i) => from + i));

describe(`SSE streams (${testDbKind()})`, () => {
  it("a text-only script: created (seq 0), text delta, usage, completed; consecutive sequences", async () => {
    const { events: list, responseId, sessionId } = await stream(script([{ text: "Hello there", usage: { outputTokens: 3 } }]), { metadata: { ticket: 7 } });
    expect(list.map((e) => e.event)).toEqual(["response.created", "response.text.delta", "response.usage", "response.completed"]);
    expectWellFormedSse(list, responseId, sessionId);
    expectConsecutive(list, 0);
    expect(responseId).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(list[0]?.data).toMatchObject({ type: "response.created", sequence: 0, metadata: { ticket: 7 } });
    expect(list[1]?.data).toMatchObject({ delta: "Hello there" });
    expect(list[2]?.data).toMatchObject({ outputTokens: 3, totalOutputTokens: 3 });
    expect(list[3]?.data).toMatchObject({
      status: "completed",
      id: responseId,
      outputText: "Hello there",
      output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello there" }] }],
      metadata: { ticket: 7 },
      usage: { inputTokens: 0, outputTokens: 3 },
    });
  });

  it("a plain string input streams created, delta, completed", async () => {
    const { events: list, responseId, sessionId } = await stream("ping");
    expect(list.map((e) => e.event)).toEqual(["response.created", "response.text.delta", "response.completed"]);
    expectWellFormedSse(list, responseId, sessionId);
    expectConsecutive(list, 0);
    expect(list[2]?.data).toMatchObject({ status: "completed", outputText: "You said: ping" });
  });

  it("an approval script ends with requires_action and closes; replay and Last-Event-ID follow live frames to the end", async () => {
    const { events: list, responseId, sessionId } = await stream(script([{ text: "Running. ", ...execTurn("echo x >> count.txt") }, { text: "Done." }]));
    expect(list.map((e) => e.event)).toEqual(["response.created", "response.text.delta", "response.tool_call", "approval.requested", "response.completed"]);
    expectWellFormedSse(list, responseId, sessionId);
    expectConsecutive(list, 0);
    const approval = list[3]?.data.approval as { id: string; type: string; cwd: string; arguments: unknown; action: string; risk: string; message: string; expiresAt: string };
    expect(approval).toMatchObject({ type: "human_approval", action: "tool:exec", arguments: { command: "echo x >> count.txt" }, risk: "medium" });
    expect(approval.message).toContain("echo x >> count.txt");
    expect(list[2]?.data).toMatchObject({ id: "call_0_0", name: "exec", arguments: { command: "echo x >> count.txt" } });
    expect(list[4]?.data).toMatchObject({ status: "requires_action", outputText: "", output: [], requiredAction: approval });

    // Replay after sequence 2 (query) while the response waits: the stored frames, then live ones.
    const followQuery = readSse(await events(responseId, sessionId, { after: 2 }));
    const followHeader = readSse(await events(responseId, sessionId, { lastEventId: 2 }));
    for (const f of [followQuery, followHeader]) {
      await f.waitFor((e) => e.event === "response.completed");
      expect(f.events.map((e) => e.data.sequence)).toEqual([3, 4]);
      expect(f.events.map((e) => e.data)).toEqual(list.slice(3).map((e) => e.data));
      expect(f.isClosed()).toBe(false);
    }
    const approved = await ok200(await decide(app, operator.apiKey, approval.id, "approve"));
    expect(approved.status).toBe("completed");
    for (const f of [followQuery, followHeader]) {
      await f.done;
      expect(f.failure()).toBeNull();
      expect(f.events.map((e) => e.event)).toEqual(["approval.requested", "response.completed", "approval.resolved", "response.tool_result", "response.text.delta", "response.completed"]);
      expectWellFormedSse(f.events, responseId, sessionId);
      expectConsecutive(f.events, 3);
      expect(f.events[2]?.data).toMatchObject({ approvalId: approval.id, decision: "approve" });
      expect(f.events.at(-1)?.data).toMatchObject({ status: "completed", outputText: "Running. Done." });
    }
    expect(lineCount(workspaceOf(app, sessionId), "count.txt")).toBe(1);

    // After the end, a replay returns exactly the stored frames after N and closes.
    const full = readSse(await events(responseId, sessionId));
    await full.done;
    expectConsecutive(full.events, 0);
    expect(full.events).toHaveLength(9);
    for (const n of [-1, 0, 4, 7]) {
      const viaQuery = readSse(await events(responseId, sessionId, { after: n }));
      const viaHeader = readSse(await events(responseId, sessionId, { lastEventId: n }));
      await Promise.all([viaQuery.done, viaHeader.done]);
      expect(viaQuery.events).toEqual(full.events.slice(n + 1));
      expect(viaHeader.events).toEqual(full.events.slice(n + 1));
    }
    const none = readSse(await events(responseId, sessionId, { after: 8 }));
    const timeout = new Promise((r) => setTimeout(() => r("open"), 1000));
    expect(await Promise.race([none.done.then(() => "closed"), timeout])).toBe("open");
    expect(none.events).toEqual([]);
    await none.cancel();
  });

  it("reasoning streams as thinking deltas and is kept as a thinking item", async () => {
    const { events: list } = await stream(script([{ reasoning: "Let me think.", text: "Answer." }]));
    expect(list.map((e) => e.event)).toEqual(["response.created", "response.thinking.delta", "response.text.delta", "response.completed"]);
    expect(list[1]?.data.delta).toBe("Let me think.");
    expect(list[3]?.data).toMatchObject({
      outputText: "Answer.",
      output: [{ type: "thinking", text: "Let me think." }, { type: "message", role: "assistant", content: [{ type: "output_text", text: "Answer." }] }],
    });
  });

  it("a failing run streams an error frame, then response.completed failed with the error and no output", async () => {
    const turns = Array.from({ length: 65 }, () => ({ text: "again ", toolCalls: [{ name: "echo", arguments: { text: "x" } }] }));
    const { events: list, responseId, sessionId } = await stream(script(turns));
    expectWellFormedSse(list, responseId, sessionId);
    expectConsecutive(list, 0);
    const [error, completed] = list.slice(-2);
    expect(error?.event).toBe("error");
    expect(error?.data.error).toEqual({ code: expect.any(String), message: expect.stringContaining("64") });
    expect(completed?.data).toMatchObject({ status: "failed", outputText: "", output: [], error: error?.data.error });
    const polled = await ok200(await app.api(`/v1/responses/${responseId}?sessionId=${sessionId}`, { key: operator.apiKey }));
    expect(polled).toMatchObject({ status: "failed", error: error?.data.error });
    expect(JSON.stringify(polled)).not.toMatch(/\n\s+at /);
  });

  it("the events route checks sessionId, ownership and `after`", async () => {
    const { responseId, sessionId } = await stream("hello");
    await expectError(await app.api(`/v1/responses/${responseId}/events`, { key: operator.apiKey }), 400, "invalid_request");
    await expectError(await events(responseId, "sess_other"), 404, "not_found");
    const other = await app.user("member");
    await expectError(await events(responseId, sessionId, { key: other.apiKey }), 404, "not_found");
    await expectError(await events(responseId, sessionId, { after: -2 }), 400, "invalid_request");
    await expectError(await app.api(`/v1/responses/${responseId}/events?sessionId=${sessionId}&after=abc`, { key: operator.apiKey }), 400, "invalid_request");
    await expectError(await app.api(`/v1/responses/${responseId}/events?sessionId=${sessionId}`), 401, "unauthenticated");
  });
});
