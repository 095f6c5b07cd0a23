import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { approvals, responseSteps } from "../../db/schema";
import { createTestDatabaseUrl, testDbKind } from "../../db/testing";
import type { TAgentConfig } from "../../server/agents/types";
import { modelAgentFromEnv } from "../../server/agents/model-agent";
import type { TTool } from "../../server/tools/types";
import { collectCardDetailsTool, getPageContextTool } from "../../server/tools/client-tools";
import { echoTool, execTool } from "../../server/tools/host-tools";
import { askUserTool, confirmUrlTool, requestInputTool, requestSecretTool } from "../../server/tools/question-tools";
import { demoApiKey, freePort, startServerProcess, type TServerProcess } from "../../server/testing/server-process";
import { startTestApp, type TTestApp } from "../../server/testing/test-app";
import { fakeModelAgent, type TFakeModel, type TFakeRequest, httpError, startFakeModel, streamed, textReply, toolReply } from "./fake-openai";
import { decide, expectError, expectHealthy, invoke, lineCount, ok200, readSse, type TBody, type TWireFrame, waitUntil, workspaceOf } from "./helpers";
import { eventsOf, replayFrames, steer, trajectory } from "./runtime-helpers";

/** fakeModelAgent's system prompt, as the endpoint receives it. */
const SYSTEM = "You are a test agent.";
const TOOLS: TTool[] = [execTool, echoTool, getPageContextTool, collectCardDetailsTool, askUserTool, requestSecretTool, requestInputTool, confirmUrlTool];

let fake: TFakeModel;
let app: TTestApp;
let key: string;
let closedPort: number;

/** A model agent against the fake endpoint with every tool kind (the tests of its timeouts set their own). */
const agent = (name: string, endpoint: Partial<NonNullable<TAgentConfig["endpoint"]>> = {}, extra: Partial<TAgentConfig> = {}): TAgentConfig =>
  fakeModelAgent(fake.url, name, endpoint, { tools: TOOLS, ...extra });

beforeAll(async () => {
  fake = await startFakeModel();
  closedPort = await freePort();
  app = await startTestApp({
    agents: [
      agent("fake"),
      agent("fake-slow", { firstTokenTimeoutMs: 400 }),
      agent("fake-budget", { timeoutMs: 5000 }),
      agent("fake-down", { baseURL: `http://127.0.0.1:${closedPort}/v1` }),
      agent("fake-retry", { maxRetries: 1 }),
      agent("fake-fallback", {}, { fallbackModel: "fake-fallback-model" }),
      agent("fake-keyed", { apiKeyEnv: "COUNTERSIGN_TEST_FAKE_MODEL_KEY", headers: { "x-team": "countersign" } }),
    ],
  });
  // Starts runs and decides them: an operator may approve its own (separation of duties is tested elsewhere).
  key = (await app.user("operator")).apiKey;
});
afterAll(async () => {
  await app?.close();
  await fake?.close();
});

let mark = 0;
beforeEach(() => {
  mark = fake.requests.length;
});
/** Requests the fake model received during this test. */
const received = (): TFakeRequest[] => fake.requests.slice(mark);

const run = (input: unknown, agentName = "fake", extra: Record<string, unknown> = {}) => invoke(app, key, input, { agent: agentName, ...extra });

/** Frames of a settled response as a late reader replays them. */
const frames = (env: { id: string; sessionId: string }) => replayFrames(app, key, env);
const deltas = (list: TWireFrame[], type = "response.text.delta") => list.filter((f) => f.type === type);
const toolResults = (env: TBody) => env.output.filter((i) => i.type === "tool_result") as Array<{ name: string; callId: string; output: Record<string, unknown> }>;

describe(`openai-compatible harness against a local fake endpoint (${testDbKind()})`, () => {
  test("text streams live as several delta frames before the response completes; the request carries system, user and the agent's tools", async () => {
    const gates = [0, 1].map(() => {
      let open = () => {};
      const promise = new Promise<void>((r) => {
        open = r;
      });
      return { promise, open };
    });
    fake.reply(
      streamed([
        { content: "Hello" },
        { gate: gates[0]?.promise as Promise<void> },
        { content: ", wor" },
        { gate: gates[1]?.promise as Promise<void> },
        { content: "ld!" },
        { finish: "stop" },
        { usage: { prompt_tokens: 11, completion_tokens: 3 } },
      ]),
    );
    const res = await app.api("/v1/responses", { key, body: { agent: "fake", input: "Say hello", stream: true } });
    expect(res.status).toBe(200);
    const sse = readSse(res);
    const streamedSoFar = () =>
      sse.events
        .filter((e) => e.event === "response.text.delta")
        .map((e) => e.data.delta)
        .join("");
    // Each piece arrives while the model still holds the rest of its answer.
    for (const [i, expected] of ["Hello", "Hello, wor"].entries()) {
      await waitUntil(() => streamedSoFar() === expected, 30_000, `live text ${JSON.stringify(expected)}`);
      expect(sse.events.some((e) => e.event === "response.completed")).toBe(false);
      gates[i]?.open();
    }
    await sse.waitFor((e) => e.event === "response.completed");
    const live = sse.events.filter((e) => e.event === "response.text.delta").map((e) => e.data);
    expect(live.length).toBeGreaterThanOrEqual(3);
    expect(live.map((d) => d.delta).join("")).toBe("Hello, world!");
    expect(new Set(live.map((d) => d.itemId))).toEqual(new Set(["msg_0"]));
    expect(new Set(live.map((d) => d.occurrenceId)).size).toBe(1);
    expect(String(live[0]?.occurrenceId)).toMatch(/^occ_0_[0-9a-f]{12}$/);
    const completed = sse.events.find((e) => e.event === "response.completed")?.data as unknown as TBody & { responseId: string };
    expect(completed.status).toBe("completed");
    expect(completed.outputText).toBe("Hello, world!");
    // A late reader replays the same frames (the final turn does not repeat the text).
    const replayed = await frames({ id: completed.responseId, sessionId: completed.sessionId });
    expect(deltas(replayed).map((d) => d.delta)).toEqual(live.map((d) => d.delta));

    const [request] = received();
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.body.model).toBe("fake-model");
    expect(request?.body.stream).toBe(true);
    expect(request?.body.stream_options).toEqual({ include_usage: true });
    expect(request?.body.messages).toEqual([
      { role: "system", content: SYSTEM },
      { role: "user", content: "Say hello" },
    ]);
    const declared = Object.fromEntries((request?.body.tools ?? []).map((t) => [t.function.name, t.function]));
    expect(Object.keys(declared).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    expect(declared.exec?.parameters).toMatchObject({ type: "object", required: ["command"], properties: { command: { type: "string" } } });
    expect(declared.echo?.description).toBe(echoTool.description);
    expect(declared.ask_user?.parameters).toMatchObject({ type: "object", required: ["questions"] });
    expect(declared.get_page_context?.parameters).toMatchObject({ type: "object" });
  });

  test("many tiny deltas are batched into a bounded number of frames", async () => {
    const text = "abcdefghij".repeat(30);
    fake.reply(textReply(text.split("")));
    const env = await run("spell it");
    expect(env.status).toBe("completed");
    expect(env.outputText).toBe(text);
    const live = deltas(await frames(env));
    expect(live.map((d) => d.delta).join("")).toBe(text);
    // One frame per 64 characters or per 50 ms, not one per delta (exact counts: live-deltas.test.ts).
    expect(live.length).toBeLessThan(text.length / 5);
  });

  test("reasoning deltas (reasoning_content) stream as thinking frames and a thinking item", async () => {
    fake.reply(streamed([{ reasoning: "The user wants " }, { sleep: 80 }, { reasoning: "a greeting." }, { content: "Hi!" }, { finish: "stop" }]));
    const env = await run("greet me");
    expect(env.status).toBe("completed");
    expect(env.outputText).toBe("Hi!");
    expect(env.output.find((i) => i.type === "thinking")).toMatchObject({ type: "thinking", text: "The user wants a greeting." });
    const all = await frames(env);
    const thinking = deltas(all, "response.thinking.delta");
    expect(thinking.map((d) => d.delta).join("")).toBe("The user wants a greeting.");
    expect(thinking.every((d) => d.itemId === "rsn_0" && /^occ_rsn_0_[0-9a-f]{12}$/.test(String(d.occurrenceId)))).toBe(true);
    // Reasoning came first, then text.
    const firstText = all.findIndex((f) => f.type === "response.text.delta");
    expect(all.findIndex((f) => f.type === "response.thinking.delta")).toBeLessThan(firstText);
  });

  test("a tool call to echo, then a final answer: the second request carries the assistant tool call and the tool result", async () => {
    fake.reply(toolReply([{ name: "echo", arguments: JSON.stringify({ text: "ping" }) }], { text: "Checking. " }), textReply(["pong received"]));
    const env = await run("echo ping");
    expect(env.status).toBe("completed");
    expect(env.outputText).toBe("Checking. pong received");
    expect(toolResults(env)).toEqual([{ type: "tool_result", callId: "call_0_0", name: "echo", output: { text: "ping" } }]);
    const [first, second] = received();
    expect(received()).toHaveLength(2);
    expect(second?.body.messages).toEqual([
      ...(first?.body.messages ?? []),
      { role: "assistant", content: "Checking. ", tool_calls: [{ id: "call_0_0", type: "function", function: { name: "echo", arguments: '{"text":"ping"}' } }] },
      { role: "tool", tool_call_id: "call_0_0", content: '{"text":"ping"}' },
    ]);
    const calls = (await frames(env)).filter((f) => f.type === "response.tool_call");
    expect(calls).toMatchObject([{ id: "call_0_0", name: "echo", arguments: { text: "ping" } }]);
  });

  test("exec needs approval: requires_action, then approve → exec and echo ran once, the model is asked again with the same prior conversation", async () => {
    fake.reply(
      toolReply(
        [
          { name: "echo", arguments: JSON.stringify({ text: "before" }) },
          { name: "exec", arguments: JSON.stringify({ command: "echo ran >> ran.txt && wc -l < ran.txt" }) },
        ],
        { text: "Running it. " },
      ),
    );
    const env = await run("run the command");
    expect(env.status).toBe("requires_action");
    const action = env.requiredAction as { type: string; id: string; cwd: string; arguments: unknown };
    expect(action).toMatchObject({ type: "human_approval", arguments: { command: "echo ran >> ran.txt && wc -l < ran.txt" } });
    expect(received()).toHaveLength(1);
    expect(lineCount(workspaceOf(app, env.sessionId), "ran.txt")).toBe(0);

    fake.reply(textReply(["Done: one line."]));
    const done = await ok200(await decide(app, key, action.id, "approve"));
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("Running it. Done: one line.");
    expect(lineCount(workspaceOf(app, env.sessionId), "ran.txt")).toBe(1);
    // Turn 0 was replayed from the step log: the model was asked exactly twice.
    const [first, second] = received();
    expect(received()).toHaveLength(2);
    const prefix = first?.body.messages ?? [];
    expect(second?.body.messages.slice(0, prefix.length)).toEqual(prefix);
    expect(second?.body.tools).toEqual(first?.body.tools);
    const rest = second?.body.messages.slice(prefix.length) ?? [];
    expect(rest.map((m) => [m.role, m.tool_call_id ?? null])).toEqual([
      ["assistant", null],
      ["tool", "call_0_0"],
      ["tool", "call_0_1"],
    ]);
    expect(JSON.parse(String(rest[2]?.content))).toEqual({ exitCode: 0, stdout: "1\n", stderr: "" });
    expect(toolResults(done).map((r) => r.name)).toEqual(["echo", "exec"]);
    const steps = await app.deps.db.select().from(responseSteps).where(eq(responseSteps.responseId, env.id));
    expect(steps.map((s) => s.key).sort()).toEqual(["model:0", "model:1", "resolved:call_0_1", "tool:call_0_0", "tool:call_0_1"]);
  });

  test("a steering message sent while the model streams reaches the next turn as a user message", async () => {
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    fake.reply(streamed([{ content: "Looking. " }, { toolCall: { index: 0, id: "c1", name: "echo", arguments: '{"text":"x"}' } }, { gate }, { finish: "tool_calls" }]), textReply(["Cats too."]));
    const res = await app.api("/v1/responses", { key, body: { agent: "fake", input: "look around", stream: true } });
    const sse = readSse(res);
    const first = await sse.waitFor((e) => e.event === "response.text.delta");
    expect((await steer(app, key, first.data.responseId, "also mention cats")).status).toBe(202);
    release();
    const completed = await sse.waitFor((e) => e.event === "response.completed");
    expect(completed.data.status).toBe("completed");
    const [one, two] = received();
    expect(two?.body.messages.slice(0, one?.body.messages.length)).toEqual(one?.body.messages);
    expect(two?.body.messages.slice(-2)).toEqual([
      { role: "tool", tool_call_id: "call_0_0", content: '{"text":"x"}' },
      { role: "user", content: "also mention cats" },
    ]);
  });

  test("cancelling while the model streams aborts the model request; nothing of the turn runs", async () => {
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    fake.reply(streamed([{ content: "About to " }, { toolCall: { index: 0, id: "c1", name: "echo", arguments: '{"text":"x"}' } }, { gate }, { finish: "tool_calls" }]));
    const res = await app.api("/v1/responses", { key, body: { agent: "fake", input: "start", stream: true } });
    const sse = readSse(res);
    const first = await sse.waitFor((e) => e.event === "response.text.delta");
    const cancelled = await ok200(await app.api(`/v1/responses/${first.data.responseId}/cancel`, { key, body: {} }));
    expect(cancelled.status).toBe("cancelled");
    await waitUntil(() => received()[0]?.aborted, 30_000, "the model request to be aborted");
    release();
    const steps = await app.deps.db.select().from(responseSteps).where(eq(responseSteps.responseId, first.data.responseId));
    expect(steps).toEqual([]);
    await expectHealthy(app);
  });

  test("a denied exec never runs; the denial settles the response without asking the model again", async () => {
    fake.reply(toolReply([{ name: "exec", arguments: JSON.stringify({ command: "touch denied.txt" }) }]));
    const env = await run("make a file");
    expect(env.status).toBe("requires_action");
    const action = env.requiredAction as { id: string; cwd: string };
    const after = await ok200(await decide(app, key, action.id, "deny"));
    expect(after.status).toBe("denied");
    expect(lineCount(workspaceOf(app, env.sessionId), "denied.txt")).toBe(0);
    const [row] = await app.deps.db.select().from(approvals).where(and(eq(approvals.responseId, env.id), eq(approvals.callId, "call_0_0")));
    expect(row?.status).toBe("denied");
    expect(received()).toHaveLength(1);
  });

  test("a client tool (get_page_context) suspends for the client; its output goes back to the model", async () => {
    fake.reply(toolReply([{ name: "get_page_context", arguments: "{}" }]));
    const env = await run("what page am I on?");
    expect(env.status).toBe("requires_action");
    const action = env.requiredAction as { type: string; id: string; name: string };
    expect(action).toMatchObject({ type: "client_tool", name: "get_page_context" });
    fake.reply(textReply(["You are on the docs."]));
    const done = await ok200(await app.api(`/v1/client-tools/${action.id}`, { key, body: { output: { url: "https://example.test/docs", title: "Docs" } } }));
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("You are on the docs.");
    const second = received()[1];
    expect(second?.body.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_0_0", content: JSON.stringify({ url: "https://example.test/docs", title: "Docs" }) });
  });

  test("ask_user suspends on a question; the answer goes back to the model", async () => {
    const questions = [{ id: "color", header: "Color", question: "Which color do you like?" }];
    fake.reply(toolReply([{ name: "ask_user", arguments: JSON.stringify({ questions }) }]));
    const env = await run("pick a color for me");
    expect(env.status).toBe("requires_action");
    expect(env.requiredAction).toMatchObject({ type: "question" });
    fake.reply(textReply(["Blue it is."]));
    // Plain text sent to the session answers its pending question.
    const answered = await ok200(await app.api("/v1/responses", { key, body: { agent: "fake", sessionId: env.sessionId, input: "blue" } }));
    const done = answered.id === env.id && answered.status === "completed" ? answered : await waitUntil(async () => {
      const body = await ok200(await app.api(`/v1/responses/${env.id}?sessionId=${env.sessionId}`, { key }));
      return body.status === "completed" ? body : null;
    });
    expect(done.outputText).toBe("Blue it is.");
    const toolMessage = received()[1]?.body.messages.at(-1);
    expect(toolMessage?.role).toBe("tool");
    expect(JSON.parse(String(toolMessage?.content))).toMatchObject({ status: "answered", answers: { color: ["blue"] } });
  });

  test("malformed JSON arguments, schema-invalid arguments and an unknown tool become tool errors the model reads; the run continues", async () => {
    fake.reply(
      toolReply([
        { name: "echo", arguments: '{"text": "unterminated' },
        { name: "echo", arguments: '{"text": 42}' },
        { name: "frobnicate", arguments: '{"x":1}' },
        { name: "exec", arguments: "{not json" },
      ]),
      textReply(["I will fix my calls."]),
    );
    const env = await run("do things");
    expect(env.status).toBe("completed");
    expect(env.outputText).toBe("I will fix my calls.");
    const results = toolResults(env);
    expect(results.map((r) => r.name)).toEqual(["echo", "echo", "frobnicate", "exec"]);
    expect(String(results[0]?.output.error)).toMatch(/^Invalid arguments for echo: they are not valid JSON/);
    expect(String(results[1]?.output.error)).toMatch(/^Invalid arguments for echo: text:/);
    expect(results[2]?.output.error).toBe("Unknown tool: frobnicate.");
    expect(String(results[3]?.output.error)).toMatch(/^Invalid arguments for exec: they are not valid JSON/);
    // Nothing needed approval: the invalid exec was never offered to a person.
    expect(await app.deps.db.select().from(approvals).where(eq(approvals.responseId, env.id))).toEqual([]);
    const second = received()[1]?.body.messages ?? [];
    const toolMessages = second.filter((m) => m.role === "tool");
    expect(toolMessages.map((m) => m.tool_call_id)).toEqual(["call_0_0", "call_0_1", "call_0_2", "call_0_3"]);
    expect(String(toolMessages[0]?.content)).toContain("Invalid arguments");
    // The unparsable call goes back to the model as `{}` beside its error.
    const assistant = second.find((m) => m.role === "assistant");
    expect(assistant?.tool_calls?.map((c) => c.function.arguments)).toEqual(["{}", '{"text":42}', '{"x":1}', "{}"]);
  });

  test("an error in the middle of the stream fails the response with model_unavailable; its partial tool call never runs", async () => {
    fake.reply(
      streamed([
        { content: "Let me " },
        { sleep: 80 },
        { toolCall: { index: 0, id: "call_x", name: "exec", arguments: '{"command":"touch half.txt"}' } },
        { error: { message: "The upstream worker crashed", code: 500 } },
      ]),
    );
    const env = await run("half a turn");
    expect(env.status).toBe("failed");
    expect(env.error?.code).toBe("model_unavailable");
    expect(env.error?.message).toMatch(/The model fake-model at http:\/\/127\.0\.0\.1:\d+\/v1 failed: .*upstream worker crashed/);
    expect(env.error?.message).not.toMatch(/\n\s+at /);
    const all = await frames(env);
    expect(all.map((f) => f.type)).toEqual(["response.created", "response.text.delta", "error", "response.completed"]);
    expect(all.find((f) => f.type === "error")).toMatchObject({ error: { code: "model_unavailable" } });
    expect(await app.deps.db.select().from(approvals).where(eq(approvals.responseId, env.id))).toEqual([]);
    const steps = await app.deps.db.select().from(responseSteps).where(eq(responseSteps.responseId, env.id));
    expect(steps).toEqual([]);
    await expectHealthy(app);
  });

  test("an HTTP 500, a stream cut off mid-way and a refused connection fail with model_unavailable; the server keeps serving", async () => {
    fake.reply(httpError(500, "model overloaded"));
    const http500 = await run("one");
    expect(http500).toMatchObject({ status: "failed", error: { code: "model_unavailable" } });
    expect(http500.error?.message).toContain("HTTP 500");

    fake.reply(streamed([{ content: "partial" }, { sleep: 80 }, { destroy: true }]));
    const cut = await run("two");
    expect(cut).toMatchObject({ status: "failed", error: { code: "model_unavailable" } });

    const down = await run("three", "fake-down");
    expect(down).toMatchObject({ status: "failed", error: { code: "model_unavailable" } });
    expect(down.error?.message).toContain(`127.0.0.1:${closedPort}`);
    const events = (await trajectory(app, down.id)).map((e) => e.type);
    expect(events).toContain("error");

    await expectHealthy(app);
    fake.reply(textReply(["still here"]));
    expect((await run("four")).outputText).toBe("still here");
  });

  test("a transient 500 is retried (maxRetries) before anything streamed", async () => {
    fake.reply(httpError(500, "warming up"), textReply(["ready"]));
    const env = await run("retry please", "fake-retry");
    expect(env.status).toBe("completed");
    expect(env.outputText).toBe("ready");
    expect(received()).toHaveLength(2);
  });

  test("a slow first token beyond firstTokenTimeoutMs fails with model_timeout and aborts the request", async () => {
    // The model holds its first token until the test lets it go, after the answer: only the
    // first-token timeout can end the turn (no clock needed to tell it from the model's reply).
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    fake.reply(streamed([{ gate: held }, { content: "too late" }, { finish: "stop" }]));
    try {
      const env = await run("slow", "fake-slow");
      expect(env.status).toBe("failed");
      expect(env.error?.code).toBe("model_timeout");
      expect(env.error?.message).toMatch(/sent no first token within 400 ms/);
      await waitUntil(() => received()[0]?.aborted, 30_000, "the fake to see the abort");
    } finally {
      release();
    }
    await expectHealthy(app);
  });

  test("a response beyond its whole budget (timeoutMs) fails with model_timeout after its partial text", async () => {
    // The model stalls after its partial text until the test lets it go, after the answer: only the
    // budget can end the turn. The budget (5 s) leaves a loaded machine ample time for the partial text.
    let release = () => {};
    const stalled = new Promise<void>((r) => {
      release = r;
    });
    fake.reply(streamed([{ content: "tick " }, { sleep: 50 }, { content: "tick " }, { gate: stalled }, { content: "tock" }, { finish: "stop" }]));
    try {
      const env = await run("count", "fake-budget");
      expect(env).toMatchObject({ status: "failed", error: { code: "model_timeout" } });
      expect(env.error?.message).toMatch(/did not finish its response within 5000 ms/);
      expect(deltas(await frames(env)).map((d) => d.delta).join("")).toBe("tick tick ");
    } finally {
      release();
    }
  });

  test("usage: each turn's output tokens become a usage frame with the running total, and the envelope sums them", async () => {
    fake.reply(
      toolReply([{ name: "echo", arguments: '{"text":"a"}' }], { usage: { prompt_tokens: 20, completion_tokens: 7 } }),
      textReply(["done"], { prompt_tokens: 30, completion_tokens: 5 }),
    );
    const env = await run("count tokens");
    expect(env.status).toBe("completed");
    expect(env.usage).toEqual({ inputTokens: 50, outputTokens: 12 });
    const usage = (await frames(env)).filter((f) => f.type === "response.usage");
    expect(usage.map((u) => [u.outputTokens, u.totalOutputTokens])).toEqual([
      [7, 7],
      [5, 12],
    ]);
    const turns = await eventsOf(app, env.id, "model.turn");
    expect(turns.map((t) => [t.data.outputTokens, t.data.finishReason])).toEqual([
      [7, "tool-calls"],
      [5, "stop"],
    ]);
  });

  test("an empty answer is classified `empty`; with a fallback model, the fallback is asked once", async () => {
    fake.reply(streamed([{ finish: "stop" }]));
    const empty = await run("say nothing");
    expect(empty.status).toBe("completed");
    expect(empty.outputText).toBe("");
    expect((await eventsOf(app, empty.id, "response.outcome")).map((e) => e.data)).toEqual([{ turn: 0, classification: "empty", fallback: null }]);

    const mark2 = fake.requests.length;
    fake.reply(streamed([{ reasoning: "hmm" }, { finish: "stop" }]), textReply(["from the fallback"]));
    const rescued = await run("say something", "fake-fallback");
    expect(rescued.status).toBe("completed");
    expect(rescued.outputText).toBe("from the fallback");
    expect((await eventsOf(app, rescued.id, "response.outcome")).map((e) => e.data)).toEqual([{ turn: 0, classification: "reasoning-only", fallback: "fake-fallback-model" }]);
    expect(fake.requests.slice(mark2).map((r) => r.body.model)).toEqual(["fake-model", "fake-fallback-model"]);
  });

  test("the API key comes from the named environment variable at call time, with the configured headers", async () => {
    process.env.COUNTERSIGN_TEST_FAKE_MODEL_KEY = "sk-fake-key-123";
    try {
      fake.reply(textReply(["authorized"]));
      expect((await run("hi", "fake-keyed")).outputText).toBe("authorized");
      expect(received()[0]?.headers.authorization).toBe("Bearer sk-fake-key-123");
      expect(received()[0]?.headers["x-team"]).toBe("countersign");
      expect(app.logs()).not.toContain("sk-fake-key-123");
    } finally {
      delete process.env.COUNTERSIGN_TEST_FAKE_MODEL_KEY;
    }
  });

  test("input: a string or {text}; anything else is refused before a run exists", async () => {
    fake.reply(textReply(["object input ok"]));
    expect((await run({ text: "hello", approvalTtlMs: 5000 })).outputText).toBe("object input ok");
    expect(received()[0]?.body.messages.at(-1)).toEqual({ role: "user", content: "hello" });
    await expectError(await app.api("/v1/responses", { key, body: { agent: "fake", input: { script: [{ text: "x" }] } } }), 400, "invalid_request");
    await expectError(await app.api("/v1/responses", { key, body: { agent: "model-not-configured", input: "hi" } }), 400, "invalid_request");
  });

  test("the environment-configured `model` agent: only with a base URL; invalid values fail loudly", () => {
    expect(modelAgentFromEnv({})).toBeNull();
    const configured = modelAgentFromEnv({ COUNTERSIGN_MODEL_BASE_URL: "http://127.0.0.1:8080/v1/", COUNTERSIGN_MODEL: "qwen3", COUNTERSIGN_MODEL_TIMEOUT_MS: "60000" });
    expect(configured).toMatchObject({ name: "model", harness: "openai-compatible", model: "qwen3", endpoint: { baseURL: "http://127.0.0.1:8080/v1", apiKeyEnv: "COUNTERSIGN_MODEL_API_KEY", timeoutMs: 60000 } });
    expect(configured?.approval.exec).toBe("always");
    expect(() => modelAgentFromEnv({ COUNTERSIGN_MODEL_BASE_URL: "localhost:8080" })).toThrow(/http\(s\) URL/);
    expect(() => modelAgentFromEnv({ COUNTERSIGN_MODEL_BASE_URL: "http://x/v1", COUNTERSIGN_MODEL_TIMEOUT_MS: "soon" })).toThrow(/COUNTERSIGN_MODEL_TIMEOUT_MS/);
  });
});

describe(`the env-configured model agent across a server crash (${testDbKind()})`, () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  });

  const post = async (url: string, apiKey: string, body: unknown) =>
    fetch(url, { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body: JSON.stringify(body) });

  test("SIGKILL while suspended and while streaming: stored turns are never asked again, a half-streamed turn is retried under a new occurrenceId", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "countersign-model-restart-"));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const database = await createTestDatabaseUrl();
    if (database) cleanups.push(database.drop);
    const port = await freePort();
    const env = {
      COUNTERSIGN_MODEL_BASE_URL: fake.url,
      COUNTERSIGN_MODEL: "env-model",
      COUNTERSIGN_MODEL_API_KEY: "sk-env-secret-456",
      COUNTERSIGN_MODEL_MAX_RETRIES: "0",
    };
    let server: TServerProcess = await startServerProcess({ dataDir, port, databaseUrl: database?.url, env });
    cleanups.push(() => server.kill("SIGKILL"));
    const apiKey = await demoApiKey(dataDir);
    const start = fake.requests.length;

    // 1. Suspended on an approval, then the process dies.
    fake.reply(toolReply([{ name: "exec", arguments: JSON.stringify({ command: "echo once >> once.txt" }) }], { text: "Starting. " }));
    const first = await (await post(`${server.url}/v1/responses`, apiKey, { agent: "model", input: "write once" })).json();
    expect(first.status).toBe("requires_action");
    expect(fake.requests.length - start).toBe(1);
    await server.kill("SIGKILL");
    server = await startServerProcess({ dataDir, port, databaseUrl: database?.url, env });
    fake.reply(textReply(["Wrote it."]));
    const done = await (await post(`${server.url}/v1/approvals/${first.requiredAction.id}`, apiKey, { decision: "approve" })).json();
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("Starting. Wrote it.");
    expect(readFileSync(join(dataDir, "workspaces", first.sessionId, "once.txt"), "utf8")).toBe("once\n");
    const asked = fake.requests.slice(start);
    expect(asked).toHaveLength(2);
    expect(asked.map((r) => r.body.model)).toEqual(["env-model", "env-model"]);
    expect(asked.every((r) => r.headers.authorization === "Bearer sk-env-secret-456")).toBe(true);
    const prefix = asked[0]?.body.messages ?? [];
    expect(asked[1]?.body.messages.slice(0, prefix.length)).toEqual(prefix);
    expect(prefix[0]).toMatchObject({ role: "system" });
    expect(asked[0]?.body.tools?.map((t) => t.function.name)).toContain("node_invoke");

    // 2. The process dies while the model streams: the turn was not stored, so it is asked again.
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    cleanups.push(async () => release());
    fake.reply(streamed([{ content: "partial answer " }, { gate }, { content: "never sent" }, { finish: "stop" }]), textReply(["full ", "answer"]));
    const res = await post(`${server.url}/v1/responses`, apiKey, { agent: "model", input: "tell me", stream: true });
    const sse = readSse(res);
    const delta = await sse.waitFor((e) => e.event === "response.text.delta");
    await server.kill("SIGKILL");
    await sse.cancel();
    release();
    server = await startServerProcess({ dataDir, port, databaseUrl: database?.url, env });
    const responseId = delta.data.responseId;
    const sessionId = delta.data.sessionId;
    const settled = await waitUntil(
      async () => {
        const body = await (await fetch(`${server.url}/v1/responses/${responseId}?sessionId=${sessionId}`, { headers: { authorization: `Bearer ${apiKey}` } })).json();
        return body.status === "completed" ? body : null;
      },
      30_000,
      "the adopted attempt to complete",
    );
    expect(settled.outputText).toBe("full answer");
    const replay = readSse(await fetch(`${server.url}/v1/responses/${responseId}/events?sessionId=${sessionId}&after=-1`, { headers: { authorization: `Bearer ${apiKey}` } }));
    await replay.done;
    const all = replay.events.map((e) => e.data).filter((f) => f.type === "response.text.delta");
    const occurrences = [...new Set(all.map((d) => String(d.occurrenceId)))];
    expect(occurrences).toHaveLength(2);
    expect(all.every((d) => d.itemId === "msg_0")).toBe(true);
    expect(all.filter((d) => d.occurrenceId === occurrences[0]).map((d) => d.delta).join("")).toBe("partial answer ");
    expect(all.filter((d) => d.occurrenceId === occurrences[1]).map((d) => d.delta).join("")).toBe("full answer");
    expect(fake.requests.length - start).toBe(4);
    expect(server.output()).not.toContain("sk-env-secret-456");
    await server.kill("SIGTERM");
  }, 120_000);
});
