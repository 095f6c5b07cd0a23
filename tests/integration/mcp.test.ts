import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { echoTool } from "../../server/tools/host-tools";
import { decide, expectHealthy, invoke, ok200, rows, script } from "./helpers";
import { callsOf, fixtureLog, questionOf, startHttpFixture, stdioFixture, streamRun, toolResultsOf } from "./mcp-helpers";
import { gwOk, pollEnvelope, questionRow } from "./questions-helpers";
import { eventsOf, replayFrames } from "./runtime-helpers";

let app: TTestApp;
let alice: TTestUser;
/** Decides Alice's approvals: a member never decides its own run's. */
let olga: TTestUser;
let dir: string;
let log: string;
let httpLog: string;
let http: Awaited<ReturnType<typeof startHttpFixture>>;
const unregister: Array<() => void> = [];
const previousEnv = process.env.COUNTERSIGN_MCP_SERVERS;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "countersign-mcp-"));
  log = join(dir, "stdio.jsonl");
  httpLog = join(dir, "http.jsonl");
  // The `scripted-mcp` agent reads its servers from the environment when it first needs them.
  process.env.COUNTERSIGN_MCP_SERVERS = JSON.stringify([stdioFixture("fixture", log, { approval: { write_note: "always", "*": "never" } })]);
  http = await startHttpFixture(httpLog);
  app = await startTestApp();
  const registerAgent = (agent: Parameters<TTestApp["deps"]["agents"]["register"]>[0]) => app.deps.agents.register(agent);
  // An agent with a Streamable HTTP server whose policy is by action and pattern (agent level).
  unregister.push(
    registerAgent({
      name: "mcp-http-test",
      harness: "scripted",
      model: "scripted",
      description: "test agent with the HTTP fixture",
      tools: [echoTool],
      approval: { echo: "never", "mcp:web.write_note": "always", "mcp:web.*": "never" },
      approvalTtlMs: 60_000,
      clientToolTtlMs: 60_000,
      maxTurns: 16,
      mcpServers: [{ name: "web", transport: "http", url: http.url }],
    }),
    registerAgent({
      name: "mcp-missing-test",
      harness: "scripted",
      model: "scripted",
      description: "test agent whose MCP server cannot start",
      tools: [],
      approval: {},
      approvalTtlMs: 60_000,
      clientToolTtlMs: 60_000,
      maxTurns: 8,
      mcpServers: [{ name: "gone", transport: "stdio", command: join(dir, "no-such-server") }],
    }),
  );
  alice = await app.user("member", "Alice");
  olga = await app.user("operator", "Olga Operator");
});

afterAll(async () => {
  for (const fn of unregister) fn();
  await app?.close();
  http?.stop();
  if (previousEnv === undefined) delete process.env.COUNTERSIGN_MCP_SERVERS;
  else process.env.COUNTERSIGN_MCP_SERVERS = previousEnv;
  rmSync(dir, { recursive: true, force: true });
});

const call = (name: string, args: Record<string, unknown> = {}, text?: string) => ({ ...(text ? { text } : {}), toolCalls: [{ name, arguments: args }] });

/** Streams a run until its question is asked; returns the stream, the question and the response. */
async function runUntilQuestion(input: unknown, agent = "scripted-mcp") {
  const sse = await streamRun(app, alice.apiKey, input, agent);
  const asked = await sse.waitFor((e) => e.event === "question.requested", 30_000);
  const ref = { id: asked.data.responseId as string, sessionId: asked.data.sessionId as string };
  // The stream ends at the run's requires_action boundary (the question); the rest is read back afterwards.
  const settled = () => pollEnvelope(app, alice.apiKey, ref, (e) => e.status !== "requires_action" && e.status !== "in_progress", 30_000);
  return { sse, question: questionOf(asked.data), responseId: ref.id, sessionId: ref.sessionId, settled };
}

describe(`MCP tools over stdio (${testDbKind()})`, () => {
  it("calls a tool of a real MCP server process through the SDK; the result is a step of the trajectory", async () => {
    const env = await invoke(app, alice.apiKey, script([call("mcp_fixture_echo", { text: "hello mcp" }, "Echoing. "), { text: "Done." }]), { agent: "scripted-mcp" });
    expect(env.status, JSON.stringify(env)).toBe("completed");
    expect(env.outputText).toBe("Echoing. Done.");
    expect(toolResultsOf(env)).toEqual([{ type: "tool_result", callId: "call_0_0", name: "mcp_fixture_echo", output: { text: "hello mcp" } }]);
    expect(callsOf(log, "echo").map((c) => c.args)).toEqual([{ text: "hello mcp" }]);
  });

  it("validates arguments against the tool's input schema before calling the server", async () => {
    const env = await invoke(app, alice.apiKey, script([call("mcp_fixture_echo", { text: 42 }), { text: "ok" }]), { agent: "scripted-mcp" });
    expect(env.status).toBe("completed");
    expect(String(toolResultsOf(env)[0]?.output.error)).toMatch(/^Invalid arguments for mcp_fixture_echo: text/);
    expect(callsOf(log, "echo")).toHaveLength(1);
    const unknown = await invoke(app, alice.apiKey, script([call("mcp_fixture_nope"), { text: "ok" }]), { agent: "scripted-mcp" });
    expect(toolResultsOf(unknown)[0]?.output).toEqual({ error: "Unknown tool: mcp_fixture_nope." });
  });

  it("a tool whose policy is always suspends for approval (action mcp:fixture.write_note) and runs exactly once when approved", async () => {
    const env = await invoke(app, alice.apiKey, script([call("mcp_fixture_write_note", { text: "buy milk" }), { text: "Noted." }]), { agent: "scripted-mcp" });
    expect(env.status).toBe("requires_action");
    const action = env.requiredAction as { type: string; id: string; action: string; message: string; arguments: unknown; risk: string };
    expect(action).toMatchObject({ type: "human_approval", action: "mcp:fixture.write_note", arguments: { text: "buy milk" }, risk: "high" });
    expect(action.message).toBe('Call write_note on the MCP server fixture with {"text":"buy milk"}?');
    expect(callsOf(log, "write_note")).toHaveLength(0); // nothing ran before the approval
    const done = await ok200(await decide(app, olga.apiKey, action.id, "approve"));
    expect(done.status).toBe("completed");
    expect(toolResultsOf(done)).toEqual([{ type: "tool_result", callId: "call_0_0", name: "mcp_fixture_write_note", output: { saved: true, text: "buy milk" } }]);
    expect(callsOf(log, "write_note").map((c) => c.args)).toEqual([{ text: "buy milk" }]);
    // A decision is used once: the call is not repeated.
    expect((await decide(app, olga.apiKey, action.id, "approve")).status).toBe(409);
    expect(callsOf(log, "write_note")).toHaveLength(1);
  });

  it("a denied MCP call never reaches the server", async () => {
    const env = await invoke(app, alice.apiKey, script([call("mcp_fixture_write_note", { text: "never" }), { text: "x" }]), { agent: "scripted-mcp" });
    const action = env.requiredAction as { id: string };
    const denied = await ok200(await decide(app, olga.apiKey, action.id, "deny"));
    expect(denied).toMatchObject({ status: "denied" });
    expect(callsOf(log, "write_note").map((c) => c.args)).toEqual([{ text: "buy milk" }]);
  });

  it("a form elicitation becomes a form question on the run; the answer goes back as accept with typed values", async () => {
    const { question, responseId, sessionId, settled } = await runUntilQuestion(script([call("mcp_fixture_ask_form", {}, "Asking. "), { text: "Thanks." }]));
    expect(question).toMatchObject({ kind: "gateway", status: "pending", responseId });
    expect(question.questions).toEqual([
      {
        questionId: "form",
        header: "fixture",
        question: "Tell us about the order.",
        options: [],
        presentation: "form",
        fields: [
          { name: "name", label: "Name", description: "Who orders", type: "string", required: true },
          { name: "count", label: "Count", type: "integer", required: true, minimum: 1, maximum: 10 },
          { name: "confirm", label: "Confirm", type: "boolean" },
        ],
      },
    ]);
    // The MCP call is in flight, and the run waits like any other: requires_action on this question.
    const waiting = await ok200(await app.api(`/v1/responses/${responseId}?sessionId=${sessionId}`, { key: alice.apiKey }));
    expect(waiting.status).toBe("requires_action");
    expect(waiting.requiredAction).toMatchObject({ type: "question", id: question.id });
    const row = await questionRow(app, question.id);
    expect(row).toMatchObject({ user_id: alice.userId, session_id: sessionId, response_id: responseId, call_id: "call_0_0" });
    const listed = await gwOk<{ questions: Array<{ id: string }> }>(app, alice.apiKey, "question.list", {});
    expect(listed.questions.map((q) => q.id)).toContain(question.id);

    // A wrong answer is refused and changes nothing.
    const bad = await app.api("/v1/gateway/question.resolve", { key: alice.apiKey, body: { id: question.id, answers: { "form.name": ["Ada"], "form.count": ["11"] } } });
    expect(bad.status).toBe(400);
    expect(await gwOk(app, alice.apiKey, "question.resolve", { id: question.id, answers: { "form.name": ["Ada"], "form.count": ["3"], "form.confirm": ["true"] } })).toEqual({
      status: "answered",
      answers: { "form.name": ["Ada"], "form.count": ["3"], "form.confirm": ["true"] },
    });
    const env = await settled();
    expect(env.status).toBe("completed");
    const elicited = { action: "accept", content: { name: "Ada", count: 3, confirm: true } };
    expect(fixtureLog(log).filter((e) => e.tool === "ask_form" && e.elicitation).map((e) => e.elicitation)).toEqual([elicited]);
    expect(toolResultsOf(env)[0]?.output).toEqual({ text: JSON.stringify(elicited) });
    const frames = await replayFrames(app, alice.apiKey, { id: responseId, sessionId });
    expect(frames.map((f) => f.type)).toEqual(["response.created", "response.text.delta", "response.tool_call", "question.requested", "response.completed", "question.resolved", "response.tool_result", "response.text.delta", "response.completed"]);
    const recorded = await eventsOf(app, responseId, "mcp.elicitation");
    expect(recorded.map((e) => e.data)).toEqual([expect.objectContaining({ callId: "call_0_0", server: "fixture", mode: "form", questionId: question.id, settled: "answered", action: "accept" })]);
  });

  it("the call that started the run answers at the elicitation's boundary: requires_action with the question (no 504)", async () => {
    const env = await invoke(app, alice.apiKey, script([call("mcp_fixture_ask_form"), { text: "Thanks." }]), { agent: "scripted-mcp" });
    expect(env.status).toBe("requires_action");
    const action = env.requiredAction as { type: string; id: string };
    expect(action.type).toBe("question");
    await gwOk(app, alice.apiKey, "question.resolve", { id: action.id, answers: { "form.name": ["Ada"], "form.count": ["2"] } });
    const done = await pollEnvelope(app, alice.apiKey, env, (e) => e.status === "completed", 30_000);
    expect(done.outputText).toContain("Thanks.");
  });

  it("a person who cancels the form declines the elicitation", async () => {
    const { question, settled } = await runUntilQuestion(script([call("mcp_fixture_ask_form"), { text: "ok" }]));
    expect(await gwOk(app, alice.apiKey, "question.resolve", { id: question.id, cancel: true })).toEqual({ status: "cancelled" });
    expect((await settled()).status).toBe("completed");
    expect(fixtureLog(log).filter((e) => e.tool === "ask_form" && e.elicitation).at(-1)?.elicitation).toEqual({ action: "decline" });
  });

  it("a URL elicitation is a literal URL confirmation: confirm → accept, decline → decline", async () => {
    const url = "https://billing.example.com/login?next=%2Forders&x=1";
    const first = await runUntilQuestion(script([call("mcp_fixture_open_link", { url }), { text: "ok" }]));
    expect(first.question.questions).toEqual([{ questionId: "confirm_url", header: "fixture", question: "Sign in to the billing portal to continue.", options: [], url }]);
    await gwOk(app, alice.apiKey, "question.resolve", { id: first.question.id, answers: { confirm_url: ["confirm"] } });
    expect((await first.settled()).status).toBe("completed");
    const second = await runUntilQuestion(script([call("mcp_fixture_open_link", { url }), { text: "ok" }]));
    await gwOk(app, alice.apiKey, "question.resolve", { id: second.question.id, answers: { confirm_url: ["decline"] } });
    await second.settled();
    expect(fixtureLog(log).filter((e) => e.tool === "open_link" && e.elicitation).map((e) => e.elicitation)).toEqual([{ action: "accept" }, { action: "decline" }]);
  });

  it("a URL the answer page cannot show literally, or a schema a form cannot show, is refused before anyone is asked", async () => {
    const before = await rows<{ n: string | number }>(app, "select count(*) as n from questions");
    const env = await invoke(app, alice.apiKey, script([call("mcp_fixture_ask_unsupported"), call("mcp_fixture_open_link", { url: "javascript:alert(1)" }), { text: "ok" }]), { agent: "scripted-mcp" });
    expect(env.status).toBe("completed");
    const [unsupported, badUrl] = toolResultsOf(env);
    expect(String(unsupported?.output.text)).toMatch(/^refused: .*Countersign cannot show this elicitation to a person: Field code: minLength is larger than maxLength\./);
    expect(String(badUrl?.output.error)).toMatch(/Countersign cannot show this elicitation to a person: url must be an absolute http\(s\) URL/);
    const after = await rows<{ n: string | number }>(app, "select count(*) as n from questions");
    expect(Number(after[0]?.n)).toBe(Number(before[0]?.n));
  });

  it("a server that crashes mid-call: a clear error in the trajectory, the run goes on, the next call reconnects", async () => {
    const pidsBefore = new Set(fixtureLog(log).map((e) => e.pid));
    const env = await invoke(app, alice.apiKey, script([call("mcp_fixture_crash"), call("mcp_fixture_echo", { text: "after the crash" }), { text: "Recovered." }]), { agent: "scripted-mcp" });
    expect(env.status, JSON.stringify(env)).toBe("completed");
    expect(toolResultsOf(env).map((r) => r.output)).toEqual([{ error: "The MCP server fixture stopped during the call." }, { text: "after the crash" }]);
    const stopped = await eventsOf(app, env.id, "mcp.server_stopped");
    expect(stopped.map((e) => e.data)).toEqual([expect.objectContaining({ callId: "call_0_0", server: "fixture", tool: "crash" })]);
    // A new server process answered the next call.
    const echo = callsOf(log, "echo").at(-1);
    expect(echo?.args).toEqual({ text: "after the crash" });
    expect(pidsBefore.has(echo?.pid as number)).toBe(false);
    await expectHealthy(app);
  });

  it("a crash while a question is pending cancels the question; nothing is answered into the void", async () => {
    const { question, responseId, settled } = await runUntilQuestion(script([call("mcp_fixture_ask_and_crash"), { text: "ok" }]));
    const env = await settled();
    expect(env.status).toBe("completed");
    expect(toolResultsOf(env)[0]?.output).toEqual({ error: "The MCP server fixture stopped during the call." });
    expect(await questionRow(app, question.id)).toMatchObject({ status: "cancelled", answered_via: "system" });
    const late = await app.api("/v1/gateway/question.resolve", { key: alice.apiKey, body: { id: question.id, answers: { "form.name": ["late"] } } });
    expect(((await late.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe("QUESTION_ALREADY_TERMINAL");
    expect(responseId).toBe(env.id);
    await expectHealthy(app);
  });

  it("cancelling the run while an elicitation waits cancels the question and the MCP call", async () => {
    const { question, responseId } = await runUntilQuestion(script([call("mcp_fixture_ask_form"), { text: "never" }]));
    const cancelled = await ok200(await app.api(`/v1/responses/${responseId}/cancel`, { key: alice.apiKey, body: {} }));
    expect(cancelled.status).toBe("cancelled");
    await pollEnvelope(app, alice.apiKey, { id: responseId, sessionId: cancelled.sessionId }, (e) => e.status === "cancelled");
    const row = await waitFor(async () => {
      const r = await questionRow(app, question.id);
      return r?.status === "cancelled" ? r : null;
    });
    expect(row).toMatchObject({ status: "cancelled", answered_via: "system" });
    await expectHealthy(app);
  });

  it("a server that cannot start: the call reports it, nothing asks for approval, the server keeps serving", async () => {
    const env = await invoke(app, alice.apiKey, script([call("mcp_gone_anything", { a: 1 }), { text: "ok" }]), { agent: "mcp-missing-test" });
    expect(env.status).toBe("completed");
    expect(String(toolResultsOf(env)[0]?.output.error)).toMatch(/^The MCP server gone is unavailable \(could not connect .*\); anything was not run\.$/);
    expect((await eventsOf(app, env.id, "mcp.unavailable")).length).toBe(1);
    await expectHealthy(app);
  });
});

describe(`MCP tools over Streamable HTTP (${testDbKind()})`, () => {
  it("calls tools of an HTTP MCP server; the agent's action policy gates write_note; elicitation works over HTTP", async () => {
    const echoed = await invoke(app, alice.apiKey, script([call("mcp_web_echo", { text: "over http" }), { text: "ok" }]), { agent: "mcp-http-test" });
    expect(toolResultsOf(echoed)[0]?.output).toEqual({ text: "over http" });
    expect(callsOf(httpLog, "echo").map((c) => [c.transport, c.args])).toEqual([["http", { text: "over http" }]]);

    const env = await invoke(app, alice.apiKey, script([call("mcp_web_write_note", { text: "via http" }), { text: "ok" }]), { agent: "mcp-http-test" });
    const action = env.requiredAction as { id: string; action: string };
    expect(action.action).toBe("mcp:web.write_note");
    expect(callsOf(httpLog, "write_note")).toHaveLength(0);
    const done = await ok200(await decide(app, olga.apiKey, action.id, "approve"));
    expect(toolResultsOf(done)[0]?.output).toEqual({ saved: true, text: "via http" });
    expect(callsOf(httpLog, "write_note")).toHaveLength(1);

    const { question, settled } = await runUntilQuestion(script([call("mcp_web_ask_form"), { text: "ok" }]), "mcp-http-test");
    await gwOk(app, alice.apiKey, "question.resolve", { id: question.id, answers: { "form.name": ["Bo"], "form.count": ["1"] } });
    expect((await settled()).status).toBe("completed");
    expect(fixtureLog(httpLog).filter((e) => e.elicitation).map((e) => e.elicitation)).toEqual([{ action: "accept", content: { name: "Bo", count: 1 } }]);
  });
});

describe(`an MCP server over HTTP that crashes (${testDbKind()})`, () => {
  it("the call in flight fails with a clear error, the next call says the server is unreachable, and it reconnects once the server is back", async () => {
    const crashLog = join(dir, "http-crash.jsonl");
    let server = await startHttpFixture(crashLog);
    const remove = app.deps.agents.register({
      name: "mcp-http-crash-test",
      harness: "scripted",
      model: "scripted",
      description: "test agent with a crashing HTTP fixture",
      tools: [],
      approval: {},
      approvalTtlMs: 60_000,
      clientToolTtlMs: 60_000,
      maxTurns: 8,
      mcpServers: [{ name: "webcrash", transport: "http", url: server.url, approval: { "*": "never" } }],
    });
    try {
      const env = await invoke(app, alice.apiKey, script([call("mcp_webcrash_crash"), call("mcp_webcrash_echo", { text: "while down" }), { text: "Still here." }]), { agent: "mcp-http-crash-test" });
      expect(env.status, JSON.stringify(env)).toBe("completed");
      const [crashed, down] = toolResultsOf(env).map((r) => r.output);
      expect(crashed).toEqual({ error: "The MCP server webcrash stopped during the call." });
      expect(String(down?.error)).toMatch(/^The MCP server webcrash is unavailable \(.*\); echo was not run\.$/);
      expect(callsOf(crashLog, "echo")).toHaveLength(0);
      await expectHealthy(app);
      server = await startHttpFixture(crashLog, server.port);
      const again = await invoke(app, alice.apiKey, script([call("mcp_webcrash_echo", { text: "back" }), { text: "ok" }]), { agent: "mcp-http-crash-test" });
      expect(toolResultsOf(again)[0]?.output).toEqual({ text: "back" });
    } finally {
      remove();
      server.stop();
    }
  });
});

async function waitFor<T>(fn: () => Promise<T | null>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

