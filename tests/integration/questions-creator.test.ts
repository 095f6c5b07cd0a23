import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { expectError, invoke, LiveClient, ok200, rows, type TBody } from "./helpers";
import { askScript, gateway, gwErr, gwOk, pollEnvelope, questionCounts, responseCount, toolResults, toolScript } from "./questions-helpers";

let app: TTestApp;
let alice: TTestUser;
let bob: TTestUser;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  [alice, bob, operator] = await Promise.all([app.user("member", "Alice"), app.user("member", "Bob"), app.user("operator", "Olga Operator")]);
});
afterAll(async () => {
  await app?.close();
});

const COLOR = { id: "color", header: "Color", question: "Which color?", options: [{ label: "Red" }, { label: "Blue" }] };
type TQuestionAction = { type: "question"; id: string };

async function asked(input: unknown, extra: Record<string, unknown> = {}) {
  const env = await invoke(app, alice.apiKey, input, extra);
  expect(env.status, JSON.stringify(env)).toBe("requires_action");
  return { env, id: (env.requiredAction as unknown as TQuestionAction).id };
}

const say = (key: string, sessionId: string, input: string) => app.api("/v1/responses", { key, body: { input, sessionId } });
const status = async (id: string) => (await gwOk<{ question: { status: string; answers: unknown; answeredBy: unknown; answeredVia: string } }>(app, alice.apiKey, "question.get", { id })).question;

describe(`plain text typed into the session answers the run's question under the creator's authority (${testDbKind()})`, () => {
  it("over HTTP: the text becomes the answer; no new response; the run continues and the reply is its next envelope", async () => {
    const { env, id } = await asked(askScript([COLOR], { after: "Noted." }));
    const responsesBefore = await responseCount(app);
    const reply = await ok200(await say(alice.apiKey, env.sessionId, "Blue, but darker"));
    expect(reply).toMatchObject({ id: env.id, sessionId: env.sessionId, status: "completed", outputText: "Let me ask. Noted.", questionId: id });
    expect(toolResults(reply)).toEqual([{ type: "tool_result", callId: "call_0_0", name: "ask_user", output: { status: "answered", answers: { color: ["Blue, but darker"] } } }]);
    expect(await responseCount(app)).toBe(responsesBefore);
    expect(await status(id)).toMatchObject({ status: "answered", answers: { color: ["Blue, but darker"] }, answeredBy: { userId: alice.userId }, answeredVia: "http" });
    // Afterwards, plain text in the session is an ordinary turn again.
    const next = await ok200(await say(alice.apiKey, env.sessionId, "thanks"));
    expect(next).toMatchObject({ status: "completed", outputText: "You said: thanks", sessionId: env.sessionId });
    expect(next.id).not.toBe(env.id);
    expect(await responseCount(app)).toBe(responsesBefore + 1);
  });

  it("over /v1/live: a string response.create answers the question on that socket; no new response", async () => {
    const live = await LiveClient.open(app, alice.apiKey);
    try {
      live.send({ type: "response.create", input: askScript([{ id: "name", header: "Name", question: "Your name?" }], { after: "Hello!" }), requestId: "q1" });
      const requested = await live.waitFor((f) => f.type === "question.requested");
      await live.waitFor((f) => f.type === "response.completed" && f.status === "requires_action");
      const responsesBefore = await responseCount(app);
      live.send({ type: "response.create", input: "Ada", requestId: "answer-1" });
      const done = await live.waitFor((f) => f.type === "response.completed" && f.status === "completed");
      expect(done.responseId).toBe(requested.responseId);
      expect(done.output).toContainEqual({ type: "tool_result", callId: "call_0_0", name: "ask_user", output: { status: "answered", answers: { name: ["Ada"] } } });
      const types = live.of(requested.responseId).map((f) => f.type);
      expect(types).toEqual(["response.created", "response.text.delta", "response.tool_call", "question.requested", "response.completed", "question.resolved", "response.tool_result", "response.text.delta", "response.completed"]);
      expect(new Set(live.of(requested.responseId).map((f) => f.sequence)).size).toBe(types.length);
      expect(await responseCount(app)).toBe(responsesBefore);
      expect(await status((requested.question as { id: string }).id)).toMatchObject({ status: "answered", answeredVia: "websocket" });
      expect(live.frames.filter((f) => f.type === "error")).toEqual([]);
    } finally {
      live.close();
    }
  });

  it("a question that needs more than a text reply refuses it visibly (409), starts no turn, stays pending; a structured answer still works", async () => {
    const cases: Array<{ input: unknown; answers: Record<string, string[]> }> = [
      { input: askScript([COLOR, { id: "size", header: "Size", question: "Size?" }]), answers: { color: ["Red"], size: ["L"] } },
      { input: toolScript("confirm_url", { url: "https://example.com/" }), answers: { confirm_url: ["confirm"] } },
      { input: toolScript("request_input", { schema: { type: "object", properties: { n: { type: "integer" } } } }), answers: { "form.n": ["3"] } },
    ];
    for (const { input, answers } of cases) {
      const { env, id } = await asked(input);
      const counts = await questionCounts(app);
      const refused = await expectError(await say(alice.apiKey, env.sessionId, "yes please"), 409, "conflict");
      expect(refused.detail).toMatch(/not used as an answer/);
      expect(refused.detail).toContain(`/answer/${id}`);
      expect(await questionCounts(app)).toEqual(counts);
      expect((await status(id)).status).toBe("pending");
      expect((await ok200(await app.api(`/v1/responses/${env.id}?sessionId=${env.sessionId}`, { key: alice.apiKey }))).status).toBe("requires_action");
      await gwOk(app, alice.apiKey, "question.resolve", { id, answers });
      const done = await pollEnvelope(app, alice.apiKey, env, (e) => e.status === "completed");
      expect(toolResults(done)).toHaveLength(1);
    }
  });

  it("a creator run that is no longer waiting: text is refused (409, no turn), gateway answers get QUESTION_REQUESTER_INACTIVE; once it waits again, text works", async () => {
    const { env, id } = await asked(askScript([COLOR], { after: "ok" }));
    // No public path leaves a question pending under a run that stopped waiting (a run's end
    // cancels its questions); only a crash between two commits or a hand-edited row could, and
    // the refusals below are the guard for exactly that. So this state is written directly.
    await rows(app, `update responses set status = 'failed' where id = '${env.id}'`);
    const counts = await questionCounts(app);
    const refused = await expectError(await say(alice.apiKey, env.sessionId, "Red"), 409, "conflict");
    expect(refused.detail).toMatch(/no longer waiting/);
    await gwErr(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] } }, "QUESTION_REQUESTER_INACTIVE");
    await gwErr(app, operator.apiKey, "question.resolve", { id, cancel: true }, "QUESTION_REQUESTER_INACTIVE");
    expect(await questionCounts(app)).toEqual(counts);
    expect((await status(id)).status).toBe("pending");

    await rows(app, `update responses set status = 'requires_action' where id = '${env.id}'`);
    const reply = await ok200(await say(alice.apiKey, env.sessionId, "Red"));
    expect(reply).toMatchObject({ id: env.id, status: "completed", questionId: id });
    expect(toolResults(reply)[0]?.output).toEqual({ status: "answered", answers: { color: ["Red"] } });
  });

  it("another user cannot type into the creator's session (404, nothing changes); an operator answers only through the question", async () => {
    const { env, id } = await asked(askScript([COLOR]));
    const counts = await questionCounts(app);
    await expectError(await say(bob.apiKey, env.sessionId, "Red"), 404, "not_found");
    await expectError(await say(operator.apiKey, env.sessionId, "Red"), 404, "not_found");
    expect(await questionCounts(app)).toEqual(counts);
    expect((await status(id)).status).toBe("pending");
    await gwOk(app, operator.apiKey, "question.resolve", { id, answers: { color: ["Blue"] } });
    const done = await pollEnvelope(app, alice.apiKey, env, (e) => e.status === "completed");
    expect(toolResults(done)[0]?.output).toEqual({ status: "answered", answers: { color: ["Blue"] } });
  });

  it("over /v1/live a refused text gets an error frame, the socket stays open, and later valid input works", async () => {
    const live = await LiveClient.open(app, alice.apiKey);
    try {
      live.send({ type: "response.create", input: askScript([COLOR, { id: "size", header: "Size", question: "Size?" }], { after: "Done." }), requestId: "q2" });
      const requested = await live.waitFor((f) => f.type === "question.requested");
      const id = (requested.question as { id: string }).id;
      await live.waitFor((f) => f.type === "response.completed" && f.status === "requires_action");
      const counts = await questionCounts(app);
      live.send({ type: "response.create", input: "Red and large", requestId: "t1" });
      const refusal = await live.waitFor((f) => f.type === "error" && f.requestId === "t1");
      expect(refusal).toMatchObject({ code: "conflict" });
      expect(String(refusal.detail)).toMatch(/not used as an answer/);
      expect(live.isOpen).toBe(true);
      expect(await questionCounts(app)).toEqual(counts);
      expect((await status(id)).status).toBe("pending");
      await gwOk(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"], size: ["large"] } });
      const done = await live.waitFor((f) => f.type === "response.completed" && f.status === "completed");
      expect(done.outputText).toBe("Let me ask. Done.");
    } finally {
      live.close();
    }
  });

  it("text and an operator's structured answer at once: one commits; a losing text is refused visibly and starts no turn", async () => {
    // Enough rounds to land in each window of the race (the text's first read, its run check, the
    // claim): the structured answer leaves 0–11 ms after the text, so the rounds spread over the
    // text's steps. A text that arrives after the answer committed is a new turn of the session.
    for (let round = 0; round < 120; round++) {
      const { env, id } = await asked(askScript([COLOR], { after: "ok" }));
      const responsesBefore = await responseCount(app);
      const lag = new Promise((resolve) => setTimeout(resolve, round % 12));
      const [text, structured] = await Promise.all([say(alice.apiKey, env.sessionId, "Red by text"), lag.then(() => gateway(app, operator.apiKey, "question.resolve", { id, answers: { color: ["Blue"] } }))]);
      const textBody = (await text.json()) as TBody & { questionId?: string };
      const why = JSON.stringify([round, text.status, textBody, structured.body]);
      const textAnswered = text.status === 200 && textBody.questionId === id;
      const textLater = text.status === 200 && textBody.questionId === undefined;
      if (textAnswered) {
        expect(structured.body, why).toMatchObject({ ok: false, error: { details: { reason: "QUESTION_ALREADY_TERMINAL", answeredBy: { userId: alice.userId } } } });
      } else {
        expect(structured.body.ok, why).toBe(true);
        // The losing text hears the same 409 whichever step it lost at; only a text after the answer is a turn.
        if (!textLater) expect([text.status, textBody.code], why).toEqual([409, "conflict"]);
      }
      expect(await responseCount(app), why).toBe(responsesBefore + (textLater ? 1 : 0));
      const done = await pollEnvelope(app, alice.apiKey, env, (e) => e.status === "completed");
      expect(toolResults(done)).toEqual([{ type: "tool_result", callId: "call_0_0", name: "ask_user", output: { status: "answered", answers: { color: [textAnswered ? "Red by text" : "Blue"] } } }]);
    }
  });
});

describe(`gateway (attach-grant) questions take structured answers only (${testDbKind()})`, () => {
  it("plain text in the session starts a normal turn; the question stays pending and its structured answer still works", async () => {
    const session = await invoke(app, alice.apiKey, "hi");
    const { id } = await gwOk<{ id: string }>(app, alice.apiKey, "question.request", { questions: [{ questionId: "name", header: "Name", question: "Your name?" }], sessionId: session.sessionId });
    const responsesBefore = await responseCount(app);
    const turn = await ok200(await say(alice.apiKey, session.sessionId, "Ada"));
    expect(turn).toMatchObject({ status: "completed", outputText: "You said: Ada", sessionId: session.sessionId });
    expect(turn).not.toHaveProperty("questionId");
    expect(await responseCount(app)).toBe(responsesBefore + 1);
    expect((await status(id)).status).toBe("pending");

    const live = await LiveClient.open(app, alice.apiKey, { sessionId: session.sessionId });
    try {
      live.send({ type: "response.create", input: "Ada again", requestId: "w1" });
      const done = await live.waitFor((f) => f.type === "response.completed");
      expect(done).toMatchObject({ status: "completed", outputText: "You said: Ada again", requestId: "w1" });
    } finally {
      live.close();
    }
    expect((await status(id)).status).toBe("pending");
    expect(await gwOk(app, alice.apiKey, "question.resolve", { id, answers: { name: ["Ada"] } })).toEqual({ status: "answered", answers: { name: ["Ada"] } });
  });

  it("a gateway question that names a response still does not take plain text", async () => {
    const run = await asked(askScript([COLOR]));
    // The run's own question takes the text; a gateway question on the same response/session never does.
    const { id: gatewayId } = await gwOk<{ id: string }>(app, alice.apiKey, "question.request", {
      questions: [{ questionId: "note", header: "Note", question: "Note?" }],
      sessionId: run.env.sessionId,
      responseId: run.env.id,
    });
    const reply = await ok200(await say(alice.apiKey, run.env.sessionId, "Red"));
    expect(reply).toMatchObject({ id: run.env.id, questionId: run.id, status: "completed" });
    expect((await status(gatewayId)).status).toBe("pending");
    const next = await ok200(await say(alice.apiKey, run.env.sessionId, "more"));
    expect(next).toMatchObject({ status: "completed", outputText: "You said: more" });
    expect((await status(gatewayId)).status).toBe("pending");
  });
});
