import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { readSecret } from "../../server/host/secret-store";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { expectError, invoke, LiveClient, readSse, rows, type TBody } from "./helpers";
import { gateway, gwErr, gwOk, pollEnvelope, questionCounts, toolResults, toolScript, tablesContaining, trpcMutation, trpcQuery } from "./questions-helpers";

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

/** A distinctive secret per test, so every scan is exact. */
const secret = (tag: string) => `s3cr3t-${tag}-${Math.random().toString(36).slice(2, 10)}-XYZ`;
const used: string[] = [];

type TQuestionAction = { type: "question"; id: string; questions: Array<Record<string, unknown>> };

/** The value is nowhere: no table (not even secret_values in plaintext), no log line. */
async function expectNowhere(value: string): Promise<void> {
  expect(await tablesContaining(app, value)).toEqual([]);
  expect(app.logs()).not.toContain(value);
}

/** Secret rows of a question: ciphertext only, which decrypts to the value. */
async function expectSealed(questionId: string, answerKey: string, value: string): Promise<string> {
  const stored = await rows<{ id: string; ciphertext: string; answer_key: string; user_id: string }>(app, `select * from secret_values where question_id = '${questionId}'`);
  expect(stored).toHaveLength(1);
  expect(stored[0]?.answer_key).toBe(answerKey);
  expect(stored[0]?.ciphertext).not.toContain(value);
  expect(Buffer.from(stored[0]?.ciphertext ?? "", "utf8").toString("base64")).not.toContain(Buffer.from(value).toString("base64"));
  expect(await readSecret(app.deps.db, app.deps.secretKey, stored[0]?.id as string)).toBe(value);
  return stored[0]?.id as string;
}

const completed = (env: { id: string; sessionId: string }) => pollEnvelope(app, alice.apiKey, env, (e) => e.status === "completed" || e.status === "failed");

describe(`request_secret (${testDbKind()})`, () => {
  it("asks with a masked question; the value goes to the encrypted store; the agent, record, trajectory and frames show only 'stored'", async () => {
    const value = secret("http");
    used.push(value);
    const res = await app.api("/v1/responses", { key: alice.apiKey, body: { input: toolScript("request_secret", { name: "api_token", prompt: "Paste your API token", header: "Token" }, "Got it."), stream: true } });
    const sse = readSse(res);
    await sse.done;
    const boundary = sse.events.at(-1)?.data as unknown as TBody & { responseId: string };
    expect(boundary.status).toBe("requires_action");
    const action = boundary.requiredAction as unknown as TQuestionAction;
    expect(action.questions).toEqual([{ questionId: "api_token", header: "Token", question: "Paste your API token", options: [], isSecret: true }]);
    const env = { id: boundary.responseId, sessionId: boundary.sessionId };

    const resolved = await gwOk(app, alice.apiKey, "question.resolve", { id: action.id, answers: { api_token: [value] } });
    expect(resolved).toEqual({ status: "answered", answers: { api_token: ["stored"] } });
    const done = await completed(env);
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("Let me ask. Got it.");
    const output = toolResults(done)[0]?.output as { status: string; stored: boolean; secretId: string };
    expect(output).toEqual({ status: "answered", stored: true, secretId: expect.stringMatching(/^secret_[0-9a-f]{32}$/) });
    expect(await expectSealed(action.id, "api_token", value)).toBe(output.secretId);

    const record = await gwOk<{ question: { answers: unknown; status: string } }>(app, alice.apiKey, "question.get", { id: action.id });
    expect(record.question).toMatchObject({ status: "answered", answers: { api_token: ["stored"] } });
    expect(await gwOk(app, alice.apiKey, "question.waitAnswer", { id: action.id, timeoutMs: 1000, includeResolutionId: true })).toEqual({ status: "answered", answers: { api_token: ["stored"] } });

    const replay = readSse(await app.api(`/v1/responses/${env.id}/events?sessionId=${env.sessionId}`, { key: alice.apiKey }));
    await replay.done;
    expect(replay.events.map((e) => e.event)).toContain("question.resolved");
    expect(replay.raw()).toContain('"stored"');
    expect(replay.raw()).not.toContain(value);
    const trajectory = await trpcQuery(app, operator.apiKey, "responses.get", { responseId: env.id });
    expect(JSON.stringify(trajectory.body)).not.toContain(value);
    expect(JSON.stringify(await gwOk(app, operator.apiKey, "question.list", {}))).not.toContain(value);
    await expectNowhere(value);
  });

  it("over /v1/live: answered through tRPC, the value stays out of every frame; typed into the session it is refused and kept nowhere", async () => {
    const value = secret("ws");
    const typed = secret("typed");
    used.push(value, typed);
    const live = await LiveClient.open(app, alice.apiKey);
    try {
      live.send({ type: "response.create", input: toolScript("request_secret", { name: "password", prompt: "Your password?" }, "Saved."), requestId: "sec-1" });
      const requested = await live.waitFor((f) => f.type === "question.requested");
      const id = (requested.question as { id: string }).id;
      await live.waitFor((f) => f.type === "response.completed");
      const before = await questionCounts(app);

      // A secret typed as plain text into the session is not an answer: refused, no new turn, not stored.
      live.send({ type: "response.create", input: typed, requestId: "typed-1" });
      const refusal = await live.waitFor((f) => f.type === "error" && f.requestId === "typed-1");
      expect(refusal.code).toBe("conflict");
      expect(JSON.stringify(refusal)).not.toContain(typed);
      expect(await questionCounts(app)).toEqual(before);
      expect((await gwOk<{ question: { status: string } }>(app, alice.apiKey, "question.get", { id })).question.status).toBe("pending");

      const viaTrpc = await trpcMutation(app, alice.apiKey, "question.resolve", { id, answers: { password: [value] } });
      expect(viaTrpc.status).toBe(200);
      expect(viaTrpc.body.result?.data).toEqual({ status: "answered", answers: { password: ["stored"] } });
      const done = await live.waitFor((f) => f.type === "response.completed" && f.status === "completed");
      expect(done.output).toContainEqual({ type: "tool_result", callId: "call_0_0", name: "request_secret", output: { status: "answered", stored: true, secretId: expect.any(String) } });
      expect(JSON.stringify(live.frames)).not.toContain(value);
      expect(JSON.stringify(live.frames)).not.toContain(typed);
      await expectSealed(id, "password", value);
      await expectNowhere(value);
      await expectNowhere(typed);
    } finally {
      live.close();
    }
  });

  it("plain text with a secret typed over HTTP is refused (409) and kept nowhere", async () => {
    const typed = secret("http-typed");
    used.push(typed);
    const env = await invoke(app, alice.apiKey, toolScript("request_secret", { name: "pin", prompt: "PIN?" }));
    expect(env.status).toBe("requires_action");
    const before = await questionCounts(app);
    const refused = await app.api("/v1/responses", { key: alice.apiKey, body: { input: typed, sessionId: env.sessionId } });
    const body = await expectError(refused, 409, "conflict");
    expect(body.detail).not.toContain(typed);
    expect(await questionCounts(app)).toEqual(before);
    await expectNowhere(typed);
    await gwOk(app, alice.apiKey, "question.resolve", { id: (env.requiredAction as unknown as TQuestionAction).id, cancel: true });
  });

  it("two people submitting different secrets at once: one is stored, the other is refused and stored nowhere", async () => {
    for (let round = 0; round < 4; round++) {
      const env = await invoke(app, alice.apiKey, toolScript("request_secret", { name: "token", prompt: "Token?" }));
      const id = (env.requiredAction as unknown as TQuestionAction).id;
      const mine = secret(`race-a${round}`);
      const theirs = secret(`race-b${round}`);
      used.push(mine, theirs);
      const [a, b] = await Promise.all([
        gateway(app, alice.apiKey, "question.resolve", { id, answers: { token: [mine] } }),
        gateway(app, operator.apiKey, "question.resolve", { id, answers: { token: [theirs] } }),
      ]);
      expect([a.body.ok, b.body.ok].filter(Boolean), JSON.stringify([a.body, b.body])).toHaveLength(1);
      const loser = a.body.ok ? b : a;
      expect(loser.status).toBe(400);
      expect(loser.body).toMatchObject({ ok: false, error: { details: { reason: "QUESTION_ALREADY_TERMINAL" } } });
      await expectSealed(id, "token", a.body.ok ? mine : theirs);
      await expectNowhere(mine);
      await expectNowhere(theirs);
      expect((await completed(env)).status).toBe("completed");
    }
  });
});

describe(`secret answers of gateway questions and forms (${testDbKind()})`, () => {
  it("a gateway isSecret question: records, lookups, waiters and lists show 'stored'", async () => {
    const value = secret("gateway");
    used.push(value);
    const { id } = await gwOk<{ id: string }>(app, alice.apiKey, "question.request", {
      questions: [
        { questionId: "db_password", header: "DB", question: "Database password?", isSecret: true },
        { questionId: "db_user", header: "User", question: "Database user?" },
      ],
    });
    const waiting = gwOk(app, alice.apiKey, "question.waitAnswer", { id, timeoutMs: 10_000 });
    expect(await gwOk(app, operator.apiKey, "question.resolve", { id, answers: { db_password: [value], db_user: ["admin"] } })).toEqual({
      status: "answered",
      answers: { db_password: ["stored"], db_user: ["admin"] },
    });
    expect(await waiting).toEqual({ status: "answered", answers: { db_password: ["stored"], db_user: ["admin"] } });
    const record = await gwOk<{ question: { answers: unknown } }>(app, alice.apiKey, "question.get", { id });
    expect(record.question.answers).toEqual({ db_password: ["stored"], db_user: ["admin"] });
    await expectSealed(id, "db_password", value);
    await expectNowhere(value);
  });

  it("request_input: a password field is secret; the agent sees 'stored' for it and typed values for the rest", async () => {
    const value = secret("form");
    used.push(value);
    const schema = { type: "object", properties: { user: { type: "string" }, pass: { type: "string", format: "password", maxLength: 40 }, pin: { type: "string", writeOnly: true, maxLength: 4 } }, required: ["user", "pass"] };
    const env = await invoke(app, alice.apiKey, toolScript("request_input", { schema }));
    const action = env.requiredAction as unknown as TQuestionAction & { questions: Array<{ fields: Array<{ name: string; secret?: boolean }> }> };
    expect(Object.fromEntries((action.questions[0]?.fields ?? []).map((f) => [f.name, Boolean(f.secret)]))).toEqual({ user: false, pass: true, pin: true });
    const tooLong = `${value}${"9".repeat(10)}`;
    const invalid = await gwErr(app, alice.apiKey, "question.resolve", { id: action.id, answers: { "form.user": ["ada"], "form.pass": [value], "form.pin": [tooLong] } }, "QUESTION_INVALID_ANSWER");
    expect(invalid.message).not.toContain(value);
    await expectNowhere(tooLong);
    expect(await tablesContaining(app, value)).toEqual([]);
    await gwOk(app, alice.apiKey, "question.resolve", { id: action.id, answers: { "form.user": ["ada"], "form.pass": [value] } });
    const done = await completed(env);
    expect(toolResults(done)[0]?.output).toEqual({ outcome: "answered", values: { user: "ada", pass: "stored" } });
    await expectSealed(action.id, "form.pass", value);
    await expectNowhere(value);
  });

  it("no secret used in this file appears in any table, log or the database as plaintext", async () => {
    expect(used.length).toBeGreaterThanOrEqual(8);
    for (const value of used) await expectNowhere(value);
  });
});
