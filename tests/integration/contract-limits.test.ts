import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, expectError, invoke, LiveClient, ok200, script } from "./helpers";
import { gwErr, gwOk, pick, toolResults, trpcQuery } from "./questions-helpers";

/**
 * Values the contract (API.md) allows and that an older schema refused at a limit the contract
 * does not set: each is accepted now, through the public surface. The limits that remain are
 * listed, with their reasons, in docs/limits.md.
 */
let app: TTestApp;
let alice: TTestUser;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  [alice, operator] = await Promise.all([app.user("member", "Alice"), app.user("operator", "Olga Operator")]);
}, 180_000);
afterAll(async () => {
  await app?.close();
});

const LONG_ID = `x${"0".repeat(299)}`;

describe(`Values the contract allows beyond old limits are accepted (${testDbKind()})`, () => {
  it("an unknown id of any length is the contract's 404 (was 400 past 200 characters), on /v1 and /v1/live", async () => {
    await expectError(await app.api("/v1/responses", { key: alice.apiKey, body: { input: "hi", sessionId: LONG_ID } }), 404, "not_found");
    await expectError(await app.api(`/v1/responses/resp_${"0".repeat(32)}?sessionId=${LONG_ID}`, { key: alice.apiKey }), 404, "not_found");
    await expectError(await app.api(`/v1/approvals/${LONG_ID}`, { key: alice.apiKey, body: { decision: "approve" } }), 404, "not_found");
    // `?wait` of any size is accepted (the server waits at most its boundary timeout); was 400 past 9 digits.
    await expectError(await app.api("/v1/approvals/approval_nope?wait=99999999999", { key: alice.apiKey }), 404, "not_found");
    const live = await LiveClient.open(app, alice.apiKey);
    try {
      live.send({ type: "response.cancel", responseId: LONG_ID });
      const error = await live.waitFor((f) => f.type === "error");
      expect((error as unknown as { error: { code: string } }).error.code).toBe("not_found");
    } finally {
      live.close();
    }
  });

  it("Gateway: a 100-character questionId, a 300-character option value, a 20,000-character answer and resolvedBy are accepted; waitAnswer takes any timeoutMs ≥ 1000", async () => {
    const questionId = `q${"a".repeat(99)}`;
    const value = "v".repeat(300);
    const created = await gwOk<{ id: string; expiresAtMs: number }>(app, alice.apiKey, "question.request", {
      questions: [pick(questionId, { options: [{ label: "Long", value }, { label: "Short" }] }), pick("note", { options: [] })],
    });
    const note = "n".repeat(20_000);
    const answers = { [questionId]: [value], note: [note] };
    expect(await gwOk(app, alice.apiKey, "question.resolve", { id: created.id, answers, resolvedBy: "r".repeat(300) })).toEqual({ status: "answered", answers });
    // An hour's wait is accepted (one call holds at most 10 min, then answers pending); answered at once here.
    expect(await gwOk(app, alice.apiKey, "question.waitAnswer", { id: created.id, timeoutMs: 3_600_000 })).toEqual({ status: "answered", answers });
    await gwErr(app, alice.apiKey, "question.waitAnswer", { id: created.id, timeoutMs: 999 }, "INVALID_PARAMS");
  });

  it("Gateway: timeoutMs past 7 days is accepted and expires after 7 days (expiresAtMs says so); an unknown long id is QUESTION_NOT_FOUND on every face", async () => {
    const before = Date.now();
    const { id, expiresAtMs } = await gwOk<{ id: string; expiresAtMs: number }>(app, alice.apiKey, "question.request", { questions: [pick()], timeoutMs: 30 * 24 * 3_600_000 });
    const week = 7 * 24 * 3_600_000;
    expect(expiresAtMs).toBeGreaterThanOrEqual(before + week - 1000);
    expect(expiresAtMs).toBeLessThanOrEqual(Date.now() + week + 1000);
    expect(await gwOk(app, alice.apiKey, "question.resolve", { id, cancel: true })).toEqual({ status: "cancelled" });
    await gwErr(app, alice.apiKey, "question.get", { id: LONG_ID }, "QUESTION_NOT_FOUND");
    await gwErr(app, alice.apiKey, "question.waitAnswer", { id: LONG_ID, timeoutMs: 1000 }, "QUESTION_NOT_FOUND");
    await gwErr(app, alice.apiKey, "question.resolve", { id: LONG_ID, cancel: true }, "QUESTION_NOT_FOUND");
    const viaTrpc = await trpcQuery(app, alice.apiKey, "question.get", { id: LONG_ID });
    expect(viaTrpc.body.error?.data.reason).toBe("QUESTION_NOT_FOUND");
  });

  it("scripted tools: echo of 100,000 characters, exec with a fractional or hour-long timeoutMs, ask_user with a 100-character id", async () => {
    const text = "e".repeat(100_000);
    const echoed = await invoke(app, alice.apiKey, script([{ toolCalls: [{ name: "echo", arguments: { text } }] }, { text: "ok" }]));
    expect(echoed.status).toBe("completed");
    expect(toolResults(echoed)[0]?.output).toEqual({ text });

    for (const timeoutMs of [1500.5, 3_600_000]) {
      const env = await invoke(app, alice.apiKey, script([{ toolCalls: [{ name: "exec", arguments: { command: "echo hi", timeoutMs } }] }, { text: "done" }]));
      expect(env.status, JSON.stringify(env)).toBe("requires_action");
      const done = await ok200(await decide(app, operator.apiKey, String(env.requiredAction?.id), "approve"));
      expect(done.status).toBe("completed");
      expect(toolResults(done)[0]?.output).toMatchObject({ exitCode: 0, stdout: "hi\n" });
    }

    const id = `a${"b".repeat(99)}`;
    const asked = await invoke(app, alice.apiKey, script([{ toolCalls: [{ name: "ask_user", arguments: { questions: [{ id, header: "Pick", question: "Which?" }] } }] }, { text: "ok" }]));
    expect(asked.status, JSON.stringify(asked)).toBe("requires_action");
    const action = asked.requiredAction as unknown as { type: string; id: string; questions: Array<{ questionId: string }> };
    expect(action.type).toBe("question");
    expect(action.questions[0]?.questionId).toBe(id);
    expect(await gwOk(app, alice.apiKey, "question.resolve", { id: action.id, answers: { [id]: ["this one"] } })).toEqual({ status: "answered", answers: { [id]: ["this one"] } });
  });

  it("a scripted approvalTtlMs or clientToolTtlMs past 7 days is accepted and expires after 7 days (the envelope's expiresAt says so)", async () => {
    const week = 7 * 24 * 3_600_000;
    const month = 30 * 24 * 3_600_000;
    const before = Date.now();
    const approval = await invoke(app, alice.apiKey, script([{ toolCalls: [{ name: "exec", arguments: { command: "echo hi" } }] }, { text: "done" }], { approvalTtlMs: month }));
    const tool = await invoke(app, alice.apiKey, script([{ toolCalls: [{ name: "get_page_context" }] }, { text: "done" }], { clientToolTtlMs: month }));
    for (const env of [approval, tool]) {
      expect(env.status, JSON.stringify(env)).toBe("requires_action");
      const expiresAt = Date.parse(String((env.requiredAction as unknown as { expiresAt: string }).expiresAt));
      expect(expiresAt).toBeGreaterThanOrEqual(before + week - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + week + 1000);
    }
  });

  it("the private client tool takes a cardholder name of any length (its inputSchema sets none)", async () => {
    const env = await invoke(app, alice.apiKey, script([{ toolCalls: [{ name: "collect_card_details" }] }, { text: "charged" }]));
    expect(env.status).toBe("requires_action");
    const done = await ok200(await app.api(`/v1/client-tools/${env.requiredAction?.id}`, { key: alice.apiKey, body: { output: { number: "4242424242424242", expiry: "12/30", name: "N".repeat(500) } } }));
    expect(done.status).toBe("completed");
    expect(toolResults(done)[0]?.output).toEqual({ cardOnFile: true, last4: "4242" });
  });

  it("MCP ask_user takes the Gateway question's length (3,000 characters; was 2,000)", async () => {
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${alice.apiKey}` } } }));
    try {
      const result = (await client.callTool({ name: "ask_user", arguments: { question: "q".repeat(3000), timeoutSeconds: 1 } })) as { isError?: boolean; content: Array<{ text: string }> };
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(JSON.parse(result.content[0]?.text ?? "null")).toMatchObject({ status: expect.stringMatching(/^(expired|pending)$/) });
    } finally {
      await client.close();
    }
  });
});
