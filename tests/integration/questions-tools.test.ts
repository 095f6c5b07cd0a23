import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { deriveQuestionId } from "../../server/core/questions/schema";
import { compileSchema, snapshotBounded } from "../../server/core/questions/structured";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { invoke, LiveClient, readSse, rows, script, type TBody } from "./helpers";
import { askScript, gateway, gwErr, gwOk, pollEnvelope, questionCounts, questionRow, toolResults, toolScript, trpcMutation } from "./questions-helpers";

let app: TTestApp;
let alice: TTestUser;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  [alice, operator] = await Promise.all([app.user("member", "Alice"), app.user("operator", "Olga Operator")]);
});
afterAll(async () => {
  await app?.close();
});

type TQuestionAction = { type: "question"; id: string; callId: string; questions: Array<Record<string, unknown>>; expiresAt: string };

const COLOR = { id: "color", header: "Color", question: "Which color do you like?", options: [{ label: "Red", description: "warm" }, { label: "Blue" }] };

/** Invokes a script that asks; returns the requires_action envelope and its question. */
async function asked(input: unknown, extra: Record<string, unknown> = {}): Promise<{ env: TBody; action: TQuestionAction }> {
  const env = await invoke(app, alice.apiKey, input, extra);
  expect(env.status, JSON.stringify(env)).toBe("requires_action");
  expect(env.outputText).toBe("");
  expect(env.output).toEqual([]);
  const action = env.requiredAction as unknown as TQuestionAction;
  expect(action.type).toBe("question");
  expect(action.callId).toBe(env.id);
  return { env, action };
}

const completed = (env: { id: string; sessionId: string }) => pollEnvelope(app, alice.apiKey, env, (e) => e.status === "completed" || e.status === "failed");

describe(`ask_user (${testDbKind()})`, () => {
  it("suspends with a question whose id is derived from the run and the call; the answer reaches the agent and the run completes", async () => {
    const { env, action } = await asked(askScript([COLOR], { after: "Red it is." }));
    expect(action.id).toBe(deriveQuestionId(env.id, "call_0_0"));
    expect(action.id).toMatch(/^ask_[0-9a-f]{32}$/);
    expect(action.questions).toEqual([
      { questionId: "color", header: "Color", question: "Which color do you like?", options: [{ label: "Red", description: "warm" }, { label: "Blue" }], isOther: true },
    ]);
    const row = await questionRow(app, action.id);
    expect(row).toMatchObject({ kind: "ask_user", status: "pending", user_id: alice.userId, session_id: env.sessionId, response_id: env.id, call_id: "call_0_0" });
    const waited = (new Date(row?.expires_at as string).getTime() - new Date(row?.created_at as string).getTime()) / 1000;
    expect(Math.round(waited)).toBe(600); // default 10 minutes

    // GET shows the same required action while it waits; the gateway lists it.
    const again = await pollEnvelope(app, alice.apiKey, env, (e) => e.status === "requires_action");
    expect(again.requiredAction).toMatchObject({ type: "question", id: action.id });
    const listed = await gwOk<{ questions: Array<{ id: string; kind: string }> }>(app, alice.apiKey, "question.list", {});
    expect(listed.questions).toContainEqual(expect.objectContaining({ id: action.id, kind: "ask_user" }));

    expect(await gwOk(app, alice.apiKey, "question.resolve", { id: action.id, answers: { color: ["Red"] } })).toEqual({ status: "answered", answers: { color: ["Red"] } });
    const done = await completed(env);
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("Let me ask. Red it is.");
    expect(toolResults(done)).toEqual([{ type: "tool_result", callId: "call_0_0", name: "ask_user", output: { status: "answered", answers: { color: ["Red"] } } }]);
    expect(done.output.map((i) => i.type)).toEqual(["message", "tool_call", "tool_result", "message"]);
    expect(await gwOk(app, alice.apiKey, "question.get", { id: action.id })).toMatchObject({ question: { status: "answered", answers: { color: ["Red"] }, answeredVia: "http" } });
    // Exactly one step result for the call: the tool is never re-run on resume.
    const steps = await rows<{ n: number | string }>(app, `select count(*) as n from response_steps where response_id = '${env.id}' and key = 'tool:call_0_0'`);
    expect(Number(steps[0]?.n)).toBe(1);
  });

  it("free text is always allowed; multiSelect takes several; 1–3 questions", async () => {
    const questions = [
      COLOR,
      { id: "extras", header: "Extras", question: "Which extras?", options: [{ label: "A" }, { label: "B" }, { label: "C" }, { label: "D" }], multiSelect: true },
      { id: "note", header: "Note", question: "Anything else?" },
    ];
    const { env, action } = await asked(askScript(questions));
    expect(action.questions.map((q) => q.isOther)).toEqual([true, true, true]);
    await gwErr(app, alice.apiKey, "question.resolve", { id: action.id, answers: { color: ["Red", "Blue"], extras: ["A"], note: ["x"] } }, "QUESTION_INVALID_ANSWER");
    await gwErr(app, alice.apiKey, "question.resolve", { id: action.id, answers: { color: ["Red"], extras: ["A"] } }, "QUESTION_INVALID_ANSWER");
    const answers = { color: ["Green, actually"], extras: ["A", "D", "my own"], note: ["no"] };
    await gwOk(app, alice.apiKey, "question.resolve", { id: action.id, answers });
    const done = await completed(env);
    expect(toolResults(done)[0]?.output).toEqual({ status: "answered", answers });
  });

  it("timeoutSeconds is clamped to 1–3600", async () => {
    for (const [given, expected] of [
      [0.5, 1],
      [-5, 1],
      [45.9, 45],
      [99_999, 3600],
    ] as const) {
      const { env, action } = await asked(askScript([COLOR], { timeoutSeconds: given }));
      const row = await questionRow(app, action.id);
      const waited = (new Date(row?.expires_at as string).getTime() - new Date(row?.created_at as string).getTime()) / 1000;
      expect(Math.round(waited), `timeoutSeconds ${given}`).toBe(expected);
      expect(Date.parse(action.expiresAt)).toBe(new Date(row?.expires_at as string).getTime());
      // A one-second question may already have expired; either way the run goes on.
      if (expected > 1) await gwOk(app, alice.apiKey, "question.resolve", { id: action.id, cancel: true });
      expect((await completed(env)).status).toBe("completed");
    }
  });

  it("nobody answers by the deadline: the agent gets a clear 'nobody answered' result and the run goes on", async () => {
    const { env, action } = await asked(askScript([COLOR], { timeoutSeconds: 1, after: "I'll pick for you." }));
    const done = await completed(env);
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("Let me ask. I'll pick for you.");
    const [result] = toolResults(done);
    expect(result).toMatchObject({ callId: "call_0_0", name: "ask_user", output: { status: "expired" } });
    expect((result!.output as { message: string }).message).toMatch(/^Nobody answered within 1 second\./);
    expect(await gwOk(app, alice.apiKey, "question.get", { id: action.id })).toMatchObject({ question: { status: "expired", answeredBy: null } });
    await gwErr(app, alice.apiKey, "question.resolve", { id: action.id, answers: { color: ["Red"] } }, "QUESTION_ALREADY_TERMINAL");
  });

  it("a cancelled question tells the agent who cancelled it; cancelling the run cancels its question", async () => {
    const first = await asked(askScript([COLOR]));
    await gwOk(app, operator.apiKey, "question.resolve", { id: first.action.id, cancel: true });
    const done = await completed(first.env);
    expect(toolResults(done)[0]?.output).toEqual({ status: "cancelled", message: "The question was cancelled by Olga Operator." });

    const second = await asked(askScript([COLOR]));
    const cancelled = await app.api(`/v1/responses/${second.env.id}/cancel`, { key: alice.apiKey, body: {} });
    expect(cancelled.status).toBe(200);
    expect((await gwOk<{ question: { status: string } }>(app, alice.apiKey, "question.get", { id: second.action.id })).question.status).toBe("cancelled");
    await gwErr(app, alice.apiKey, "question.resolve", { id: second.action.id, answers: { color: ["Red"] } }, "QUESTION_ALREADY_TERMINAL");
  });

  it("bad ask_user arguments give the agent an error result, ask nobody, and the run goes on", async () => {
    const before = await questionCounts(app);
    const bad: unknown[] = [
      { questions: [] },
      { questions: [COLOR, { ...COLOR, id: "b" }, { ...COLOR, id: "c" }, { ...COLOR, id: "d" }] },
      { questions: [{ ...COLOR, header: "Way too long!" }] },
      { questions: [{ ...COLOR, options: [{ label: "Only one" }] }] },
      { questions: [{ ...COLOR, options: ["a", "b", "c", "d", "e"].map((label) => ({ label })) }] },
      { questions: [{ ...COLOR, options: [{ label: "x".repeat(65) }, { label: "y" }] }] },
      { questions: [{ ...COLOR, options: [{ label: "Same" }, { label: "Same" }] }] },
      { questions: [{ ...COLOR, id: "Not-An-Id" }] },
      { questions: [COLOR, COLOR] },
      { questions: [COLOR], timeoutSeconds: "60" },
      { questions: [COLOR], extra: true },
    ];
    for (const args of bad) {
      const env = await invoke(app, alice.apiKey, toolScript("ask_user", args as Record<string, unknown>, "Moving on."));
      expect(env.status, JSON.stringify(args)).toBe("completed");
      expect(env.outputText).toBe("Let me ask. Moving on.");
      const output = toolResults(env)[0]?.output as { error: string };
      expect(typeof output.error, JSON.stringify(env.output)).toBe("string");
    }
    const after = await questionCounts(app);
    expect(after.questions).toBe(before.questions);
  });

  it("at most one pending question per session: a second run asking in the same session gets a clear result", async () => {
    const first = await asked(askScript([COLOR]));
    const second = await invoke(app, alice.apiKey, askScript([{ ...COLOR, id: "size" }], { after: "ok" }), { sessionId: first.env.sessionId });
    expect(second.status).toBe("completed");
    expect(toolResults(second)[0]?.output).toEqual({ error: "Another question is already waiting for an answer in this session; wait for it before asking again." });
    const pending = await rows(app, `select id from questions where session_id = '${first.env.sessionId}' and status = 'pending'`);
    expect(pending).toEqual([{ id: first.action.id }]);
    // A gateway question in the same session does not count.
    await gwOk(app, alice.apiKey, "question.request", { questions: [{ questionId: "g", header: "G", question: "G?" }], sessionId: first.env.sessionId });
    await gwOk(app, alice.apiKey, "question.resolve", { id: first.action.id, answers: { color: ["Blue"] } });
    await completed(first.env);
    // After it settled the session may ask again.
    const third = await asked(askScript([COLOR]), { sessionId: first.env.sessionId });
    await gwOk(app, alice.apiKey, "question.resolve", { id: third.action.id, cancel: true });
  });

  it("runs racing to ask in one session: exactly one question is pending, the others get the clear result, none fails", async () => {
    for (let round = 0; round < 4; round++) {
      const session = await invoke(app, alice.apiKey, "start");
      const envs = await Promise.all(Array.from({ length: 4 }, () => invoke(app, alice.apiKey, askScript([COLOR], { after: "done" }), { sessionId: session.sessionId })));
      expect(envs.map((e) => e.status).sort(), JSON.stringify(envs.map((e) => [e.status, e.error]))).toEqual(["completed", "completed", "completed", "requires_action"]);
      for (const env of envs.filter((e) => e.status === "completed")) {
        expect(toolResults(env)[0]?.output).toEqual({ error: "Another question is already waiting for an answer in this session; wait for it before asking again." });
      }
      const waiting = envs.find((e) => e.status === "requires_action") as TBody;
      await gwOk(app, alice.apiKey, "question.resolve", { id: (waiting.requiredAction as unknown as TQuestionAction).id, cancel: true });
    }
  });

  it("a person and an operator answering a run's question at once: one commits, the other gets QUESTION_ALREADY_TERMINAL naming the winner", async () => {
    for (let round = 0; round < 6; round++) {
      const { env, action } = await asked(askScript([COLOR]));
      const [mine, theirs] = await Promise.all([
        gateway(app, alice.apiKey, "question.resolve", { id: action.id, answers: { color: ["Red"] } }),
        trpcMutation(app, operator.apiKey, "question.resolve", { id: action.id, answers: { color: ["Blue"] } }),
      ]);
      const iWon = mine.body.ok;
      expect([iWon, theirs.status === 200].filter(Boolean), JSON.stringify([mine, theirs])).toHaveLength(1);
      if (iWon) {
        expect(theirs.status).toBe(409);
        expect(theirs.body.error?.data).toMatchObject({ reason: "QUESTION_ALREADY_TERMINAL", details: { answeredBy: { userId: alice.userId, name: "Alice" } } });
      } else {
        expect(mine.body).toMatchObject({ ok: false, error: { details: { reason: "QUESTION_ALREADY_TERMINAL", answeredBy: { userId: operator.userId, name: "Olga Operator" } } } });
      }
      const done = await completed(env);
      expect(done.status).toBe("completed");
      expect(toolResults(done)).toHaveLength(1);
      expect(toolResults(done)[0]?.output).toEqual({ status: "answered", answers: { color: [iWon ? "Red" : "Blue"] } });
    }
  });

  it("many concurrent answers to a run's question: exactly one commits, every other answer is QUESTION_ALREADY_TERMINAL", async () => {
    for (let round = 0; round < 3; round++) {
      const { env, action } = await asked(askScript([COLOR]));
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => gateway(app, i % 2 ? alice.apiKey : operator.apiKey, "question.resolve", { id: action.id, answers: { color: [`answer ${i}`] } })),
      );
      const winners = results.filter((r) => r.body.ok);
      expect(winners).toHaveLength(1);
      const record = (await gwOk<{ question: { answeredBy: unknown; answers: unknown } }>(app, alice.apiKey, "question.get", { id: action.id })).question;
      for (const loser of results.filter((r) => !r.body.ok)) {
        expect(loser.body, JSON.stringify(loser.body)).toMatchObject({ ok: false, error: { details: { reason: "QUESTION_ALREADY_TERMINAL", answeredBy: record.answeredBy } } });
      }
      const done = await completed(env);
      expect(toolResults(done)).toHaveLength(1);
      expect(toolResults(done)[0]?.output).toEqual({ status: "answered", answers: record.answers });
    }
  });

  it("over SSE: question.requested carries the record, then requires_action; the answer's frames follow on the events stream", async () => {
    const res = await app.api("/v1/responses", { key: alice.apiKey, body: { input: askScript([COLOR]), stream: true } });
    const sse = readSse(res);
    await sse.done;
    expect(sse.events.map((e) => e.event)).toEqual(["response.created", "response.text.delta", "response.tool_call", "question.requested", "response.completed"]);
    const requested = sse.events[3]?.data as unknown as { question: { id: string; status: string; kind: string; questions: unknown[] } };
    expect(requested.question).toMatchObject({ status: "pending", kind: "ask_user" });
    const boundary = sse.events[4]?.data as unknown as TBody & { responseId: string };
    expect(boundary.status).toBe("requires_action");
    expect(boundary.requiredAction).toMatchObject({ type: "question", id: requested.question.id, questions: requested.question.questions });

    const follow = readSse(await app.api(`/v1/responses/${boundary.responseId}/events?sessionId=${boundary.sessionId}&after=4`, { key: alice.apiKey }));
    await gwOk(app, alice.apiKey, "question.resolve", { id: requested.question.id, answers: { color: ["Blue"] } });
    await follow.done;
    expect(follow.events.map((e) => e.event)).toEqual(["question.resolved", "response.tool_result", "response.text.delta", "response.completed"]);
    expect(follow.events[0]?.data.question).toMatchObject({ id: requested.question.id, status: "answered", answers: { color: ["Blue"] } });
    expect(follow.events[3]?.data.status).toBe("completed");
  });

  it("over /v1/live: the socket sees the question, stays open, and continues when it is answered over HTTP", async () => {
    const live = await LiveClient.open(app, alice.apiKey);
    try {
      live.send({ type: "response.create", input: askScript([COLOR]), requestId: "ask-1" });
      const requested = await live.waitFor((f) => f.type === "question.requested");
      expect(requested.requestId).toBe("ask-1");
      const boundary = await live.waitFor((f) => f.type === "response.completed");
      expect(boundary.status).toBe("requires_action");
      const id = (requested.question as { id: string }).id;
      await gwOk(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] } });
      const done = await live.waitFor((f) => f.type === "response.completed" && f.status === "completed");
      expect(done.requestId).toBe("ask-1");
      expect(live.isOpen).toBe(true);
      const types = live.of(requested.responseId).map((f) => f.type);
      expect(types).toEqual(["response.created", "response.text.delta", "response.tool_call", "question.requested", "response.completed", "question.resolved", "response.tool_result", "response.text.delta", "response.completed"]);
      const seqs = live.of(requested.responseId).map((f) => f.sequence);
      expect(seqs).toEqual(seqs.map((_, i) => i));
    } finally {
      live.close();
    }
  });
});

describe(`request_input (${testDbKind()})`, () => {
  const SCHEMA = {
    type: "object",
    properties: {
      name: { type: "string", title: "Your name", maxLength: 40 },
      age: { type: "integer", minimum: 0 },
      ratio: { type: "number", default: 0.5 },
      subscribe: { type: "boolean", default: true },
      plan: { enum: ["free", "pro"] },
    },
    required: ["name", "plan"],
  };

  it("compiles primitive fields into a form; answered values come back typed", async () => {
    const { env, action } = await asked(toolScript("request_input", { schema: SCHEMA, title: "Sign up", message: "Please sign up." }));
    // (Field order follows the stored arguments; jsonb does not keep key order, so compare as a set.)
    const [form] = action.questions as Array<{ fields: Array<{ name: string }> }>;
    expect({ ...form, fields: undefined }).toEqual({ questionId: "form", header: "Sign up", question: "Please sign up.", options: [], presentation: "form", fields: undefined });
    expect([...(form?.fields ?? [])].sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: "age", label: "age", type: "integer", minimum: 0 },
      { name: "name", label: "Your name", type: "string", required: true, maxLength: 40 },
      { name: "plan", label: "plan", type: "enum", enum: ["free", "pro"], required: true },
      { name: "ratio", label: "ratio", type: "number", default: 0.5 },
      { name: "subscribe", label: "subscribe", type: "boolean", default: true },
    ]);
    expect((await questionRow(app, action.id))?.kind).toBe("structured");
    await gwErr(app, alice.apiKey, "question.resolve", { id: action.id, answers: { "form.name": ["Ada"], "form.plan": ["gold"] } }, "QUESTION_INVALID_ANSWER");
    await gwErr(app, alice.apiKey, "question.resolve", { id: action.id, answers: { "form.name": ["Ada"], "form.plan": ["pro"], "form.age": ["old"] } }, "QUESTION_INVALID_ANSWER");
    await gwErr(app, alice.apiKey, "question.resolve", { id: action.id, answers: { "form.plan": ["pro"] } }, "QUESTION_INVALID_ANSWER");
    await gwOk(app, alice.apiKey, "question.resolve", { id: action.id, answers: { "form.name": ["Ada"], "form.plan": ["pro"], "form.age": ["36"] } });
    const done = await completed(env);
    expect(toolResults(done)[0]?.output).toEqual({ outcome: "answered", values: { name: "Ada", age: 36, ratio: 0.5, subscribe: true, plan: "pro" } });
  });

  it("a person who cancels declines; a question nobody answers, or a cancelled run, is cancelled", async () => {
    const declined = await asked(toolScript("request_input", { schema: SCHEMA }));
    await gwOk(app, alice.apiKey, "question.resolve", { id: declined.action.id, cancel: true });
    expect(toolResults(await completed(declined.env))[0]?.output).toEqual({ outcome: "declined" });

    const expired = await asked(toolScript("request_input", { schema: SCHEMA, timeoutSeconds: 1 }));
    const output = toolResults(await completed(expired.env))[0]?.output as { outcome: string; reason: string };
    expect(output.outcome).toBe("cancelled");
    expect(output.reason).toMatch(/Nobody answered/);
  });

  it("schemas a form cannot show are unsupported, decided before anything is shown", async () => {
    const unsupported: string[] = [
      { type: "object", properties: { address: { type: "object", properties: { street: { type: "string" } } } } },
      { type: "object", properties: { tags: { type: "array", items: { type: "string" } } } },
      { type: "object", properties: { x: { anyOf: [{ type: "string" }, { type: "number" }] } } },
      { type: "object", properties: { x: { $ref: "#/definitions/x" } } },
      { type: "object", properties: { x: { enum: ["a", 1] } } },
      { type: "object", properties: {} },
      { type: "object", properties: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}`, { type: "string" }])) },
      { type: "string" },
      [{ type: "object" }],
      "not a schema",
      { type: "object", properties: { Name: { type: "string" }, name: { type: "string" } } },
      { type: "object", properties: { big: { type: "string", default: "x".repeat(3000) } } },
      { type: "object", properties: { many: { enum: Array.from({ length: 60 }, (_, i) => `v${i}`) } } },
      { type: "object", properties: { long: { enum: ["y".repeat(300), "b"] } } },
    ].map((schema) => JSON.stringify(schema));
    // As a model would send them: "__proto__" is then an own key of the parsed JSON, never a prototype.
    unsupported.push('{"__proto__":{"type":"object","properties":{"x":{"type":"string"}}}}');
    unsupported.push('{"type":"object","__proto__":{"properties":{"x":{"type":"string"}}}}');
    const before = await questionCounts(app);
    for (const schema of unsupported) {
      const body = `{"input":{"script":[{"text":"Let me ask. ","toolCalls":[{"name":"request_input","arguments":{"schema":${schema}}}]},{"text":"Fine."}]}}`;
      const res = await app.api("/v1/responses", { key: alice.apiKey, rawBody: body, headers: { "content-type": "application/json" } });
      const env = (await res.json()) as TBody;
      expect(env.status, `${schema}: ${JSON.stringify(env)}`).toBe("completed");
      expect(env.outputText).toBe("Let me ask. Fine.");
      const output = toolResults(env)[0]?.output as { outcome: string; reason: string };
      expect(output.outcome, `${schema}: ${JSON.stringify(output)}`).toBe("unsupported");
      expect(typeof output.reason).toBe("string");
      expect(env.output.map((i) => i.type)).toEqual(["message", "tool_call", "tool_result", "message"]);
    }
    expect((await questionCounts(app)).questions).toBe(before.questions);
  });

  it("the schema snapshot copies bounded own data and never invokes accessors", () => {
    let touched = 0;
    const hostile = {
      type: "object",
      properties: {
        get name() {
          touched++;
          return { type: "string" };
        },
        age: { type: "integer" },
      },
    };
    Object.defineProperty(hostile, "required", { enumerable: true, get: () => {
        touched++;
        return ["age"];
      } });
    const compiled = compileSchema(hostile);
    expect(touched).toBe(0);
    expect(compiled).toEqual({ ok: true, fields: [{ name: "age", label: "age", type: "integer" }] });
    const inherited = Object.create({ type: "object", properties: { x: { type: "string" } } });
    expect(compileSchema(inherited).ok).toBe(false);
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let i = 0; i < 50; i++) deep = deep.next = {} as Record<string, unknown>;
    expect(JSON.stringify(snapshotBounded(root)).length).toBeLessThan(200);
    expect((snapshotBounded("z".repeat(10_000)) as string).length).toBe(4000);
  });
});

describe(`confirm_url (${testDbKind()})`, () => {
  const URL_AS_GIVEN = "HTTPS://Example.COM:8443/a/../b%20c/?q=1&Q=%7E#Frag";

  it("shows the URL exactly as given; confirm → confirmed, decline → declined", async () => {
    const first = await asked(toolScript("confirm_url", { url: URL_AS_GIVEN, reason: "To read the docs." }));
    expect(first.action.questions).toEqual([{ questionId: "confirm_url", header: "Open link", question: "To read the docs.", options: [], url: URL_AS_GIVEN }]);
    expect((await questionRow(app, first.action.id))?.kind).toBe("url");
    await gwErr(app, alice.apiKey, "question.resolve", { id: first.action.id, answers: { confirm_url: ["yes"] } }, "QUESTION_INVALID_ANSWER");
    await gwOk(app, alice.apiKey, "question.resolve", { id: first.action.id, answers: { confirm_url: ["confirm"] } });
    expect(toolResults(await completed(first.env))[0]?.output).toEqual({ outcome: "confirmed", url: URL_AS_GIVEN });

    const second = await asked(toolScript("confirm_url", { url: "http://localhost:3000/x" }));
    expect(second.action.questions[0]?.question).toBe("Do you want to open this link?");
    await gwOk(app, alice.apiKey, "question.resolve", { id: second.action.id, answers: { confirm_url: ["decline"] } });
    expect(toolResults(await completed(second.env))[0]?.output).toEqual({ outcome: "declined", url: "http://localhost:3000/x" });

    const third = await asked(toolScript("confirm_url", { url: "https://example.com/" }));
    await gwOk(app, alice.apiKey, "question.resolve", { id: third.action.id, cancel: true });
    expect(toolResults(await completed(third.env))[0]?.output).toEqual({ outcome: "declined", url: "https://example.com/" });
  });

  it("URLs with credentials, other schemes or relative URLs are refused before anything is shown", async () => {
    const before = await questionCounts(app);
    for (const url of ["https://user:pass@example.com/", "https://user@example.com/", "ftp://example.com/", "javascript:alert(1)", "/relative", "example.com", "https://exa mple.com/", "https://example.com:99999/", ""]) {
      const env = await invoke(app, alice.apiKey, toolScript("confirm_url", { url }, "Skipped."));
      expect(env.status, url).toBe("completed");
      expect(toolResults(env)[0]?.output, url).toEqual({ error: expect.any(String) });
    }
    for (const args of [{ url: "https://example.com/", reason: "" }, { url: "https://example.com/", reason: "r".repeat(2001) }]) {
      const env = await invoke(app, alice.apiKey, toolScript("confirm_url", args, "Skipped."));
      expect(env.status, JSON.stringify(env)).toBe("completed");
      expect(toolResults(env)[0]?.output).toEqual({ error: expect.any(String) });
    }
    expect((await questionCounts(app)).questions).toBe(before.questions);
  });
});

void script;
