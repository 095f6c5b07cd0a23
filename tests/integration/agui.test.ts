import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BaseEvent, EventType, HttpAgent, type Interrupt, type RunFinishedEvent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testDbKind } from "../../db/testing";
import { threadSessionId } from "../../server/services/agui-threads";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { echoTool } from "../../server/tools/host-tools";
import { expectError, expectHealthy, rows, type TScriptTurn } from "./helpers";
import { fixtureLog, stdioFixture } from "./mcp-helpers";

let app: TTestApp;
let alice: TTestUser;
let bob: TTestUser;
let dir: string;
let mcpLog: string;
let unregister: () => void = () => {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "countersign-agui-"));
  mcpLog = join(dir, "mcp.jsonl");
  app = await startTestApp();
  unregister = app.deps.agents.register({
    name: "agui-mcp-test",
    harness: "scripted",
    model: "scripted",
    description: "test agent with the MCP fixture",
    tools: [echoTool],
    approval: { echo: "never", "mcp:*": "never" },
    approvalTtlMs: 60_000,
    clientToolTtlMs: 60_000,
    maxTurns: 8,
    mcpServers: [stdioFixture("fixture", mcpLog)],
  });
  // Alice resumes her own threads' approval interrupts: an operator may approve its own runs (a member may not).
  [alice, bob] = await Promise.all([app.user("operator", "Alice"), app.user("member", "Bob")]);
});

afterAll(async () => {
  unregister();
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An AG-UI client for `/v1/agui` with the user's API key. */
const client = (key: string, threadId?: string) => new HttpAgent({ url: `${app.url}/v1/agui`, headers: { authorization: `Bearer ${key}` }, ...(threadId ? { threadId } : {}) });

type TRun = { events: BaseEvent[]; finished: RunFinishedEvent | undefined; result: unknown; error: unknown };

/** Runs the agent once and collects every event it received (and the error, if the run failed). */
async function run(agent: HttpAgent, params: Parameters<HttpAgent["runAgent"]>[0] = {}, expectFailure = false): Promise<TRun> {
  const events: BaseEvent[] = [];
  let error: unknown = null;
  let result: unknown;
  // The client logs the failures it rethrows; an expected one need not clutter the output.
  const quiet = expectFailure ? vi.spyOn(console, "error").mockImplementation(() => {}) : null;
  try {
    result = (await agent.runAgent(params, { onEvent: ({ event }) => void events.push(event) })).result;
  } catch (e) {
    error = e;
  } finally {
    quiet?.mockRestore();
  }
  for (const event of events) expect(EventSchemas.safeParse(event).success, JSON.stringify(event)).toBe(true);
  return { events, finished: events.find((e) => e.type === EventType.RUN_FINISHED) as RunFinishedEvent | undefined, result, error };
}

const types = (r: TRun) => r.events.map((e) => e.type);
const ofType = <T = Record<string, unknown>>(r: TRun, type: EventType) => r.events.filter((e) => e.type === type) as unknown as T[];
const scripted = (turns: TScriptTurn[], extra: Record<string, unknown> = {}) => ({ forwardedProps: { script: turns, ...extra } });
const interruptOf = (r: TRun): Interrupt => {
  const outcome = r.finished?.outcome;
  expect(outcome?.type, JSON.stringify(r.events)).toBe("interrupt");
  const interrupts = (outcome as { interrupts: Interrupt[] }).interrupts;
  expect(interrupts).toHaveLength(1);
  return interrupts[0] as Interrupt;
};

describe(`AG-UI (${testDbKind()})`, () => {
  it("a text run: RUN_STARTED, one text message, RUN_FINISHED success; the thread is one session across runs", async () => {
    const agent = client(alice.apiKey);
    agent.addMessage({ id: "u1", role: "user", content: "hello there" });
    const first = await run(agent);
    expect(first.error).toBeNull();
    expect(types(first)).toEqual([EventType.RUN_STARTED, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]);
    expect(ofType(first, EventType.TEXT_MESSAGE_CONTENT)[0]?.delta).toBe("You said: hello there");
    expect(first.finished).toMatchObject({ threadId: agent.threadId, outcome: { type: "success" } });
    expect(first.result).toMatchObject({ status: "completed", outputText: "You said: hello there" });
    expect(agent.messages.at(-1)).toMatchObject({ role: "assistant", content: "You said: hello there" });

    agent.addMessage({ id: "u2", role: "user", content: "again" });
    const second = await run(agent);
    expect(second.result).toMatchObject({ outputText: "You said: again" });
    const sessions = await rows<{ session_id: string }>(app, `select distinct session_id from responses where metadata->'agui'->>'threadId' = '${agent.threadId}'`);
    expect(sessions.map((s) => s.session_id)).toEqual([threadSessionId(alice.userId, agent.threadId)]);
    // Another user's run on the same thread id is a different session.
    const other = client(bob.apiKey, agent.threadId);
    other.addMessage({ id: "b1", role: "user", content: "mine" });
    expect((await run(other)).result).toMatchObject({ outputText: "You said: mine", sessionId: threadSessionId(bob.userId, agent.threadId) });
  });

  it("an approval is an interrupt; resuming with approve runs the tool once and completes with the result events", async () => {
    const agent = client(alice.apiKey);
    const first = await run(agent, scripted([{ text: "Writing. ", toolCalls: [{ name: "exec", arguments: { command: "echo ran >> marker.txt" } }] }, { text: "Done." }]));
    expect(first.error).toBeNull();
    expect(types(first)).toEqual([
      EventType.RUN_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.TOOL_CALL_START,
      EventType.TOOL_CALL_ARGS,
      EventType.TOOL_CALL_END,
      EventType.RUN_FINISHED,
    ]);
    const start = ofType<{ toolCallId: string; toolCallName: string; parentMessageId: string }>(first, EventType.TOOL_CALL_START)[0];
    expect(start).toMatchObject({ toolCallName: "exec", parentMessageId: ofType<{ messageId: string }>(first, EventType.TEXT_MESSAGE_START)[0]?.messageId });
    expect(JSON.parse(String(ofType(first, EventType.TOOL_CALL_ARGS)[0]?.delta))).toEqual({ command: "echo ran >> marker.txt" });
    const interrupt = interruptOf(first);
    expect(interrupt).toMatchObject({ reason: "human_approval", toolCallId: start?.toolCallId, metadata: { countersign: { action: "tool:exec", arguments: { command: "echo ran >> marker.txt" } } } });
    expect(interrupt.id).toMatch(/^approval_[0-9a-f]{32}$/);
    expect(interrupt.message).toMatch(/^Run `echo ran >> marker.txt` in /);
    expect(agent.pendingInterrupts.map((i) => i.id)).toEqual([interrupt.id]);
    const workspace = join(app.dataDir, "workspaces", threadSessionId(alice.userId, agent.threadId));
    expect(existsSync(join(workspace, "marker.txt"))).toBe(false);

    // The client refuses a new run that ignores the pending interrupt.
    expect((await run(agent, {}, true)).error).toBeTruthy();

    const resumed = await run(agent, { resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "approve" } }] });
    expect(resumed.error).toBeNull();
    expect(types(resumed)).toEqual([EventType.RUN_STARTED, EventType.CUSTOM, EventType.TOOL_CALL_RESULT, EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_CONTENT, EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]);
    expect(ofType(resumed, EventType.CUSTOM)[0]).toMatchObject({ name: "countersign.approval.resolved", value: { approvalId: interrupt.id, decision: "approve" } });
    const result = ofType<{ toolCallId: string; content: string }>(resumed, EventType.TOOL_CALL_RESULT)[0];
    expect(result?.toolCallId).toBe(start?.toolCallId);
    expect(JSON.parse(String(result?.content))).toEqual({ exitCode: 0, stdout: "", stderr: "" });
    expect(resumed.finished?.outcome).toEqual({ type: "success" });
    expect(resumed.result).toMatchObject({ status: "completed", outputText: "Writing. Done." });
    expect(readFileSync(join(workspace, "marker.txt"), "utf8")).toBe("ran\n");
    expect(agent.pendingInterrupts).toEqual([]);
    expect(agent.messages.find((m) => m.role === "tool")).toMatchObject({ toolCallId: start?.toolCallId });

    // The decision was used: answering the same interrupt again is a conflict, and nothing runs again.
    const again = await app.api("/v1/agui", {
      key: alice.apiKey,
      body: { threadId: agent.threadId, runId: "r-again", messages: [], resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "approve" } }] },
    });
    await expectError(again, 409, "already_decided");
    expect(readFileSync(join(workspace, "marker.txt"), "utf8")).toBe("ran\n");
  });

  it("resuming with deny (or cancelling the interrupt) ends the run as cancelled; the tool never runs", async () => {
    for (const entry of [{ status: "resolved" as const, payload: { decision: "deny" } }, { status: "cancelled" as const }]) {
      const agent = client(alice.apiKey);
      const first = await run(agent, scripted([{ toolCalls: [{ name: "exec", arguments: { command: "echo no > denied.txt" } }] }, { text: "x" }]));
      const interrupt = interruptOf(first);
      const resumed = await run(agent, { resume: [{ interruptId: interrupt.id, ...entry }] });
      expect(resumed.error).toBeNull();
      expect(types(resumed)).toEqual([EventType.RUN_STARTED, EventType.CUSTOM, EventType.RUN_FINISHED]);
      expect(resumed.finished).toMatchObject({ outcome: { type: "cancelled" }, result: { status: "denied" } });
      expect(existsSync(join(app.dataDir, "workspaces", threadSessionId(alice.userId, agent.threadId), "denied.txt"))).toBe(false);
      expect(agent.pendingInterrupts).toEqual([]);
    }
  });

  it("a question is an interrupt whose answers resume the run", async () => {
    const agent = client(alice.apiKey);
    const question = { id: "color", header: "Color", question: "Which color?", options: [{ label: "Red" }, { label: "Blue" }] };
    const first = await run(agent, scripted([{ text: "Asking. ", toolCalls: [{ name: "ask_user", arguments: { questions: [question] } }] }, { text: "Thanks." }]));
    const interrupt = interruptOf(first);
    expect(interrupt).toMatchObject({
      reason: "question",
      message: "Which color?",
      toolCallId: ofType<{ toolCallId: string }>(first, EventType.TOOL_CALL_START)[0]?.toolCallId,
      responseSchema: { type: "object", required: ["answers"], properties: { answers: { properties: { color: { type: "array", items: { type: "string" } } } } } },
      metadata: { countersign: { type: "question", answerPage: `/answer/${interrupt.id}` } },
    });
    // A bad answer is refused before anything runs; the interrupt stays open.
    const bad = await run(agent, { resume: [{ interruptId: interrupt.id, status: "resolved", payload: { answers: { color: ["Red", "Blue"] } } }] }, true);
    expect(bad.error).toBeTruthy();
    expect(agent.pendingInterrupts.map((i) => i.id)).toEqual([interrupt.id]);
    const resumed = await run(agent, { resume: [{ interruptId: interrupt.id, status: "resolved", payload: { answers: { color: ["Red"] } } }] });
    expect(resumed.error).toBeNull();
    expect(JSON.parse(String(ofType(resumed, EventType.TOOL_CALL_RESULT)[0]?.content))).toEqual({ status: "answered", answers: { color: ["Red"] } });
    expect(resumed.result).toMatchObject({ status: "completed", outputText: "Asking. Thanks." });
    expect(ofType(resumed, EventType.CUSTOM).map((e) => e.name)).toEqual(["countersign.question.resolved"]);
  });

  it("a client tool is an interrupt whose output resumes the run", async () => {
    const agent = client(alice.apiKey);
    const first = await run(agent, scripted([{ toolCalls: [{ name: "get_page_context", arguments: {} }] }, { text: "Seen." }]));
    const interrupt = interruptOf(first);
    expect(interrupt).toMatchObject({ reason: "client_tool", metadata: { countersign: { name: "get_page_context" } } });
    const resumed = await run(agent, { resume: [{ interruptId: interrupt.id, status: "resolved", payload: { output: { url: "https://example.com/", title: "Example" } } }] });
    expect(JSON.parse(String(ofType(resumed, EventType.TOOL_CALL_RESULT)[0]?.content))).toEqual({ url: "https://example.com/", title: "Example" });
    expect(resumed.result).toMatchObject({ status: "completed", outputText: "Seen." });
  });

  it("an MCP elicitation while the tool call is in flight is an interrupt too; its answer goes back to the MCP server", async () => {
    const agent = client(alice.apiKey);
    const first = await run(agent, scripted([{ toolCalls: [{ name: "mcp_fixture_ask_form", arguments: {} }] }, { text: "Got it." }], { agent: "agui-mcp-test" }));
    expect(first.error).toBeNull();
    const interrupt = interruptOf(first);
    expect(interrupt).toMatchObject({ reason: "question", message: "Tell us about the order.", metadata: { countersign: { kind: "gateway" } } });
    const resumed = await run(agent, {
      forwardedProps: { agent: "agui-mcp-test" },
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { answers: { "form.name": ["Cy"], "form.count": ["2"], "form.confirm": ["false"] } } }],
    });
    expect(resumed.error).toBeNull();
    expect(resumed.result).toMatchObject({ status: "completed", outputText: "Got it." });
    expect(fixtureLog(mcpLog).filter((e) => e.elicitation).map((e) => e.elicitation)).toEqual([{ action: "accept", content: { name: "Cy", count: 2, confirm: false } }]);
  });

  it("a failed run ends with RUN_ERROR", async () => {
    const agent = client(alice.apiKey);
    const turns = Array.from({ length: 70 }, () => ({ toolCalls: [{ name: "echo", arguments: { text: "x" } }] }));
    const failed = await run(agent, scripted(turns));
    const runError = ofType<{ message: string; code: string }>(failed, EventType.RUN_ERROR)[0];
    expect(runError).toMatchObject({ code: "harness_error", message: "The agent reached its limit of 64 model turns." });
    expect(failed.finished).toBeUndefined();
  });

  it("bad input is refused before any event with the contract's error shape; the server keeps serving", async () => {
    const post = (body: unknown, key: string | null = alice.apiKey) => app.api("/v1/agui", { ...(key ? { key } : {}), body });
    await expectError(await post({ threadId: "t", runId: "r", messages: [] }, null), 401, "unauthenticated");
    await expectError(await post({ threadId: "t", messages: [] }), 400, "invalid_request");
    await expectError(await post({ threadId: "t", runId: "r", messages: [] }), 400, "invalid_request");
    await expectError(await post({ threadId: "t", runId: "r", messages: [{ id: "m", role: "user", content: "hi" }], forwardedProps: { agent: "nope" } }), 400, "invalid_request");
    await expectError(await post({ threadId: "t", runId: "r", messages: [], forwardedProps: { script: [{ bogus: 1 }] } }), 400, "invalid_request");
    await expectError(await post({ threadId: "t", runId: "r", messages: [], resume: [{ interruptId: "approval_nope", status: "resolved", payload: { decision: "approve" } }] }), 404, "not_found");
    // Another user's interrupt looks missing; a malformed payload is a 400 and decides nothing.
    const agent = client(alice.apiKey);
    const interrupt = interruptOf(await run(agent, scripted([{ toolCalls: [{ name: "exec", arguments: { command: "true" } }] }])));
    await expectError(await post({ threadId: agent.threadId, runId: "r", messages: [], resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "approve" } }] }, bob.apiKey), 404, "not_found");
    await expectError(await post({ threadId: agent.threadId, runId: "r", messages: [], resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "maybe" } }] }), 400, "invalid_request");
    await expectError(await post({ threadId: "another-thread", runId: "r", messages: [], resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "approve" } }] }), 400, "invalid_request");
    const [approval] = await rows<{ status: string }>(app, `select status from approvals where id = '${interrupt.id}'`);
    expect(approval?.status).toBe("pending");
    await expectError(await app.api("/v1/agui", { key: alice.apiKey, rawBody: "{", headers: { "content-type": "application/json" } }), 400, "invalid_json");
    await expectHealthy(app);
  });
});
