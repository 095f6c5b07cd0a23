import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { expectError, invoke, script } from "./helpers";
import { gateway, gwErr, gwOk, pick, questionCounts, questionRow, trpcMutation, trpcQuery, watchWaiters } from "./questions-helpers";

let app: TTestApp;
let alice: TTestUser;
let bob: TTestUser;
let operator: TTestUser;
let auditor: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  [alice, bob, operator, auditor] = await Promise.all([app.user("member", "Alice"), app.user("member", "Bob"), app.user("operator", "Olga Operator"), app.user("auditor", "Audrey Auditor")]);
});
afterAll(async () => {
  await app?.close();
});

type TRecord = {
  id: string;
  kind: string;
  status: string;
  questions: Array<Record<string, unknown>>;
  answers: Record<string, string[]> | null;
  sessionId: string | null;
  responseId: string | null;
  requester: { userId: string; name: string | null };
  answeredBy: { userId: string; name: string | null } | null;
  answeredVia: string | null;
  answeredAt: string | null;
  expiresAt: string;
  expiresAtMs: number;
  createdAt: string;
};

const ask = (key: string, params: Record<string, unknown> = {}) => gwOk<{ id: string; expiresAtMs: number }>(app, key, "question.request", { questions: [pick()], ...params });
const get = async (key: string, id: string) => (await gwOk<{ question: TRecord }>(app, key, "question.get", { id })).question;
const list = async (key: string) => (await gwOk<{ questions: TRecord[] }>(app, key, "question.list", {})).questions;

describe(`Gateway question methods over HTTP (${testDbKind()})`, () => {
  it("request → {id, expiresAtMs}; get and list show the pending record; answered through resolve and waitAnswer", async () => {
    const before = Date.now();
    const created = await ask(alice.apiKey, { timeoutMs: 120_000 });
    expect(Object.keys(created).sort()).toEqual(["expiresAtMs", "id"]);
    expect(created.id).toMatch(/^ask_[0-9a-f]{32}$/);
    expect(created.expiresAtMs).toBeGreaterThanOrEqual(before + 120_000 - 2000);
    expect(created.expiresAtMs).toBeLessThanOrEqual(Date.now() + 120_000 + 2000);

    const record = await get(alice.apiKey, created.id);
    expect(record).toMatchObject({
      id: created.id,
      kind: "gateway",
      status: "pending",
      answers: null,
      sessionId: null,
      responseId: null,
      requester: { userId: alice.userId, name: "Alice" },
      answeredBy: null,
      answeredAt: null,
      expiresAtMs: created.expiresAtMs,
    });
    expect(record.questions).toEqual([{ questionId: "color", header: "Color", question: "Which color?", options: [{ label: "Red" }, { label: "Blue", value: "blue" }] }]);
    expect((await list(alice.apiKey)).map((q) => q.id)).toContain(created.id);

    // The waiter's own bound is far longer than the test may take: only the answer ends its wait. It is
    // known to be waiting (subscribed) before the answer, and the answer's change reaches it.
    const waiters = watchWaiters(app);
    try {
      const waiting = gwOk<{ status: string; answers?: unknown }>(app, alice.apiKey, "question.waitAnswer", { id: created.id, timeoutMs: 600_000 });
      await waiters.until(1);
      const resolved = await gwOk(app, alice.apiKey, "question.resolve", { id: created.id, answers: { color: ["blue"] } });
      expect(resolved).toEqual({ status: "answered", answers: { color: ["blue"] } });
      expect(await waiting).toEqual({ status: "answered", answers: { color: ["blue"] } });
      expect(waiters.heard).toContain(created.id);
    } finally {
      waiters.stop();
    }

    // Terminal records stay readable, with who answered, how and when; they leave the pending list.
    const answered = await get(alice.apiKey, created.id);
    expect(answered).toMatchObject({ status: "answered", answers: { color: ["blue"] }, answeredBy: { userId: alice.userId, name: "Alice" }, answeredVia: "http" });
    expect(Date.parse(answered.answeredAt as string)).toBeGreaterThan(before - 1000);
    expect((await list(alice.apiKey)).map((q) => q.id)).not.toContain(created.id);
    expect(await gwOk(app, alice.apiKey, "question.waitAnswer", { id: created.id, timeoutMs: 1000 })).toEqual({ status: "answered", answers: { color: ["blue"] } });
    const stored = await questionRow(app, created.id);
    expect(stored).toMatchObject({ status: "answered", answered_by: alice.userId, answered_via: "http" });
  });

  it("a caller-chosen id is kept and unique per creator: another person's same id is a different question; reusing one's own is QUESTION_ID_IN_USE (also concurrently) and changes nothing", async () => {
    const created = await ask(alice.apiKey, { id: "harness:run-1.q_1" });
    expect(created.id).toBe("harness:run-1.q_1");
    const counts = await questionCounts(app);
    await gwErr(app, alice.apiKey, "question.request", { id: "harness:run-1.q_1", questions: [pick()] }, "QUESTION_ID_IN_USE");
    expect(await questionCounts(app)).toEqual(counts);
    // Bob's question with the same id: his own, addressed by that id, answered apart from Alice's.
    const bobs = await gwOk<{ id: string }>(app, bob.apiKey, "question.request", { id: "harness:run-1.q_1", questions: [{ ...pick(), header: "Bob's" }] });
    expect(bobs.id).toBe("harness:run-1.q_1");
    expect(await get(bob.apiKey, "harness:run-1.q_1")).toMatchObject({ id: "harness:run-1.q_1", requester: { userId: bob.userId }, questions: [{ header: "Bob's" }] });
    await gwErr(app, bob.apiKey, "question.request", { id: "harness:run-1.q_1", questions: [pick()] }, "QUESTION_ID_IN_USE");
    // An operator sees both, each under an id that addresses it: Alice's keeps the id, Bob's has its own key.
    const pending = await list(operator.apiKey);
    expect(pending.find((q) => q.id === "harness:run-1.q_1")?.requester.userId).toBe(alice.userId);
    const bobsKey = pending.find((q) => q.requester.userId === bob.userId && q.questions[0]?.header === "Bob's")?.id as string;
    expect(bobsKey).toMatch(/^ask_/);
    expect((await get(operator.apiKey, bobsKey)).requester.userId).toBe(bob.userId);
    // Bob answers his; Alice's stays pending.
    await gwOk(app, bob.apiKey, "question.resolve", { id: "harness:run-1.q_1", answers: { color: ["Red"] } });
    expect(await gwOk(app, bob.apiKey, "question.waitAnswer", { id: "harness:run-1.q_1", timeoutMs: 1000 })).toEqual({ status: "answered", answers: { color: ["Red"] } });
    expect(await get(operator.apiKey, bobsKey)).toMatchObject({ status: "answered", answers: { color: ["Red"] } });
    expect(await get(alice.apiKey, "harness:run-1.q_1")).toMatchObject({ status: "pending", requester: { userId: alice.userId } });

    const racers = await Promise.all(Array.from({ length: 8 }, () => gateway(app, alice.apiKey, "question.request", { id: "raced_id", questions: [pick()] })));
    const winners = racers.filter((r) => r.body.ok);
    expect(winners).toHaveLength(1);
    for (const loser of racers.filter((r) => !r.body.ok)) {
      expect(loser.status).toBe(400);
      expect(loser.body).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST", details: { reason: "QUESTION_ID_IN_USE" } } });
    }
    // Two creators choosing the same new id at once: two questions, each its creator's.
    const pair = await Promise.all([alice, bob].map((u) => gateway(app, u.apiKey, "question.request", { id: "both_at_once", questions: [pick()] })));
    expect(pair.map((r) => [r.status, (r.body as { payload?: { id: string } }).payload?.id])).toEqual([
      [200, "both_at_once"],
      [200, "both_at_once"],
    ]);
    expect((await get(alice.apiKey, "both_at_once")).requester.userId).toBe(alice.userId);
    expect((await get(bob.apiKey, "both_at_once")).requester.userId).toBe(bob.userId);
    // Bob's, the raced winner and the pair.
    expect(await questionCounts(app)).toEqual({ ...counts, questions: counts.questions + 4 });
  });

  it("cancel → {status:cancelled}; waiters see cancelled; a later answer is QUESTION_ALREADY_TERMINAL", async () => {
    const { id } = await ask(alice.apiKey);
    const waiters = watchWaiters(app);
    try {
      const waiting = gwOk(app, alice.apiKey, "question.waitAnswer", { id, timeoutMs: 600_000 });
      await waiters.until(1);
      expect(await gwOk(app, alice.apiKey, "question.resolve", { id, cancel: true })).toEqual({ status: "cancelled" });
      expect(await waiting).toEqual({ status: "cancelled" });
      expect(waiters.heard).toContain(id);
    } finally {
      waiters.stop();
    }
    expect(await get(alice.apiKey, id)).toMatchObject({ status: "cancelled", answers: null, answeredBy: { userId: alice.userId } });
    const late = await gwErr(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] } }, "QUESTION_ALREADY_TERMINAL");
    expect(late.details).toMatchObject({ status: "cancelled", answeredBy: { userId: alice.userId, name: "Alice" } });
    await gwErr(app, alice.apiKey, "question.resolve", { id, cancel: true }, "QUESTION_ALREADY_TERMINAL");
  });

  it("waitAnswer returns {status:pending} when the waiter's own timeout passes; timeoutMs below 1000 is refused", async () => {
    const { id } = await ask(alice.apiKey);
    // Two waiters on the same pending question; only their bounds differ. The short one answers
    // pending while the long one (far longer than the test may take) still waits, so the answer is
    // the waiter's own bound passing, compared with another bound rather than with a clock.
    let longDone = false;
    const long = gwOk(app, alice.apiKey, "question.waitAnswer", { id, timeoutMs: 600_000 }).finally(() => {
      longDone = true;
    });
    expect(await gwOk(app, alice.apiKey, "question.waitAnswer", { id, timeoutMs: 1000 })).toEqual({ status: "pending" });
    expect(longDone).toBe(false);
    await gwErr(app, alice.apiKey, "question.waitAnswer", { id, timeoutMs: 999 }, "INVALID_PARAMS");
    await gwErr(app, alice.apiKey, "question.waitAnswer", { id, timeoutMs: 0 }, "INVALID_PARAMS");
    await gwErr(app, alice.apiKey, "question.waitAnswer", { id, timeoutMs: "5000" }, "INVALID_PARAMS");
    await gwErr(app, alice.apiKey, "question.waitAnswer", { id, includeResolutionId: "yes" }, "INVALID_PARAMS");
    await gwErr(app, alice.apiKey, "question.waitAnswer", { id: "ask_nope", timeoutMs: 1000 }, "QUESTION_NOT_FOUND");
    expect((await get(alice.apiKey, id)).status).toBe("pending");
    // The long waiter was still waiting; it ends with the question.
    expect(longDone).toBe(false);
    await gwOk(app, alice.apiKey, "question.resolve", { id, cancel: true });
    expect(await long).toEqual({ status: "cancelled" });
  });

  it("a question nobody answers expires at its deadline (the server's clock moved past it): waiters see expired, the record says expired", async () => {
    const { id, expiresAtMs } = await ask(alice.apiKey, { timeoutMs: 60_000 });
    expect(expiresAtMs - Date.now()).toBeLessThanOrEqual(60_000);
    const waiters = watchWaiters(app);
    try {
      // Before its deadline nothing expires it: a waiter's own short bound answers pending.
      expect(await gwOk(app, alice.apiKey, "question.waitAnswer", { id, timeoutMs: 1000 })).toEqual({ status: "pending" });
      // A waiter whose own bound the test cannot reach; the deadline passes (on the server's clock) while it waits.
      const waiting = gwOk(app, alice.apiKey, "question.waitAnswer", { id, timeoutMs: 600_000 });
      await waiters.until(2);
      app.clock.advance(60_000 + 1000);
      expect(await waiting).toEqual({ status: "expired" });
    } finally {
      app.clock.reset();
      waiters.stop();
    }
    expect(await get(alice.apiKey, id)).toMatchObject({ status: "expired", answers: null, answeredBy: null });
    expect((await list(alice.apiKey)).map((q) => q.id)).not.toContain(id);
    const late = await gwErr(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] } }, "QUESTION_ALREADY_TERMINAL");
    expect(late.details).toMatchObject({ status: "expired", answeredBy: null });
  });

  it("a question answered after its deadline but before the sweep is refused as expired", async () => {
    const { id } = await ask(alice.apiKey, { timeoutMs: 60_000 });
    // The server's clock moves past the deadline and the answer comes at once: whether or not the
    // sweep got there first, an answer after the deadline is refused as expired.
    app.clock.advance(60_000 + 1000);
    let refused: Awaited<ReturnType<typeof gwErr>>;
    try {
      refused = await gwErr(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] } }, "QUESTION_ALREADY_TERMINAL");
    } finally {
      app.clock.reset();
    }
    expect(refused.details).toMatchObject({ status: "expired" });
    expect((await get(alice.apiKey, id)).status).toBe("expired");
  });

  it("single-select takes one value; options match by value (or label); free text only with isOther; multiSelect takes several", async () => {
    const { id } = await ask(alice.apiKey, {
      questions: [
        pick("color"),
        { questionId: "toppings", header: "Toppings", question: "Which toppings?", options: [{ label: "Cheese" }, { label: "Ham" }, { label: "Olives" }], multiSelect: true },
        { questionId: "size", header: "Size", question: "Which size?", options: [{ label: "Small" }, { label: "Large" }], isOther: true },
      ],
    });
    const counts = await questionCounts(app);
    const bad: Array<[Record<string, string[]>, RegExp]> = [
      [{ color: ["Red", "blue"], toppings: ["Ham"], size: ["Small"] }, /single-select/],
      [{ color: ["Green"], toppings: ["Ham"], size: ["Small"] }, /not one of the options/],
      [{ color: ["Blue"], toppings: ["Ham"], size: ["Small"] }, /not one of the options/], // Blue's value is "blue"
      [{ color: ["Red"], toppings: ["Ham", "Pineapple"], size: ["Small"] }, /not one of the options/],
      [{ color: ["Red"], toppings: ["Ham", "Ham"], size: ["Small"] }, /repeated/],
      [{ color: ["Red"], toppings: ["Ham"] }, /size needs an answer/],
      [{ color: ["Red"], toppings: ["Ham"], size: ["Small"], extra: ["x"] }, /Unknown answer key/],
      [{ color: ["Red"], toppings: [], size: ["Small"] }, /toppings needs an answer/],
    ];
    for (const [answers, message] of bad) {
      const error = await gwErr(app, alice.apiKey, "question.resolve", { id, answers }, "QUESTION_INVALID_ANSWER");
      expect(error.message).toMatch(message);
    }
    expect(await questionCounts(app)).toEqual(counts);
    expect((await get(alice.apiKey, id)).status).toBe("pending");
    const answers = { color: ["Red"], toppings: ["Olives", "Cheese"], size: ["Medium, please"] };
    expect(await gwOk(app, alice.apiKey, "question.resolve", { id, answers })).toEqual({ status: "answered", answers });
  });

  it("questions without options take one non-empty text; URL confirmations take confirm or decline; forms check field types", async () => {
    const { id } = await ask(alice.apiKey, {
      questions: [
        { questionId: "name", header: "Name", question: "Your name?" },
        { questionId: "link", header: "Open link", question: "Open it?", url: "https://example.com/a?b=c#d" },
        {
          questionId: "form",
          header: "Details",
          question: "Fill in",
          presentation: "form",
          fields: [
            { name: "age", type: "integer", required: true, minimum: 0, maximum: 150 },
            { name: "height", type: "number" },
            { name: "subscribe", type: "boolean", default: false },
            { name: "plan", type: "enum", enum: ["free", "pro"], required: true },
            { name: "nick", type: "string", maxLength: 5 },
          ],
        },
      ],
    });
    const good = { name: ["Alice"], link: ["confirm"], "form.age": ["42"], "form.plan": ["pro"] };
    const bad: Array<[Record<string, string[]>, RegExp]> = [
      [{ ...good, name: [""] }, /non-empty text/],
      [{ ...good, name: ["a", "b"] }, /exactly one/],
      [{ ...good, link: ["yes"] }, /confirm/],
      [{ ...good, "form.age": ["forty"] }, /must be a number/],
      [{ ...good, "form.age": ["4.5"] }, /whole number/],
      [{ ...good, "form.age": ["151"] }, /at most 150/],
      [{ ...good, "form.height": ["tall"] }, /must be a number/],
      [{ ...good, "form.subscribe": ["yes"] }, /true or false/],
      [{ ...good, "form.plan": ["gold"] }, /one of free, pro/],
      [{ ...good, "form.nick": ["toolong"] }, /at most 5 characters/],
      [{ name: ["Alice"], link: ["confirm"], "form.plan": ["pro"] }, /form.age is required/],
      [{ ...good, form: ["x"] }, /Unknown answer key/],
    ];
    for (const [answers, message] of bad) {
      const error = await gwErr(app, alice.apiKey, "question.resolve", { id, answers }, "QUESTION_INVALID_ANSWER");
      expect(error.message).toMatch(message);
    }
    expect((await get(alice.apiKey, id)).status).toBe("pending");
    expect(await gwOk(app, alice.apiKey, "question.resolve", { id, answers: { ...good, "form.height": ["1.8"] } })).toEqual({
      status: "answered",
      answers: { name: ["Alice"], link: ["confirm"], "form.age": ["42"], "form.height": ["1.8"], "form.subscribe": ["false"], "form.plan": ["pro"] },
    });
  });

  it("shape errors are 400 INVALID_PARAMS and change nothing", async () => {
    const q = pick();
    const cases: unknown[] = [
      {},
      { questions: [] },
      { questions: [q, pick("b"), pick("c"), pick("d")] },
      { questions: [q, q] },
      { questions: [{ ...q, questionId: "Bad-Id" }] },
      { questions: [{ ...q, questionId: "1abc" }] },
      { questions: [{ ...q, header: "Thirteen char" }] },
      { questions: [{ ...q, header: "" }] },
      { questions: [{ ...q, question: "" }] },
      { questions: [{ ...q, options: [{ label: "Only" }] }] },
      { questions: [{ ...q, options: ["a", "b", "c", "d", "e"].map((label) => ({ label })) }] },
      { questions: [{ ...q, options: [{ label: "x".repeat(65) }, { label: "b" }] }] },
      { questions: [{ ...q, options: [{ label: "Same" }, { label: "Same" }] }] },
      { questions: [{ ...q, options: [{ label: "A", extra: 1 }, { label: "B" }] }] },
      { questions: [{ ...q, surprise: true }] },
      { questions: [{ ...q, multiSelect: "yes" }] },
      { questions: [q], surprise: 1 },
      { questions: [q], timeoutMs: 999 },
      { questions: [q], timeoutMs: 1500.5 },
      { questions: [q], timeoutMs: "60000" },
      { questions: [q], id: "has space" },
      { questions: [q], id: "" },
      { questions: [q], id: "x".repeat(129) },
      { questions: [q], id: 42 },
      { questions: [{ questionId: "u", header: "Link", question: "Open?", url: "https://user:secret@example.com/" }] },
      { questions: [{ questionId: "u", header: "Link", question: "Open?", url: "https://user@example.com/" }] },
      { questions: [{ questionId: "u", header: "Link", question: "Open?", url: "ftp://example.com/" }] },
      { questions: [{ questionId: "u", header: "Link", question: "Open?", url: "javascript:alert(1)" }] },
      { questions: [{ questionId: "u", header: "Link", question: "Open?", url: "/relative" }] },
      { questions: [{ questionId: "u", header: "Link", question: "Open?", url: "https://example.com/a b" }] },
      { questions: [{ ...q, url: "https://example.com/" }] },
      { questions: [{ questionId: "f", header: "Form", question: "Fill", fields: [{ name: "a", type: "string" }] }] },
      { questions: [{ questionId: "f", header: "Form", question: "Fill", presentation: "form" }] },
      { questions: [{ questionId: "f", header: "Form", question: "Fill", presentation: "form", fields: [{ name: "a", type: "object" }] }] },
      { questions: [{ questionId: "f", header: "Form", question: "Fill", presentation: "form", fields: [{ name: "a", type: "enum" }] }] },
      { questions: q },
      [q],
    ];
    const counts = await questionCounts(app);
    for (const params of cases) await gwErr(app, alice.apiKey, "question.request", params, "INVALID_PARAMS");
    const { id } = await ask(alice.apiKey);
    const after = await questionCounts(app);
    expect(after).toEqual({ ...counts, questions: counts.questions + 1 });

    const resolveCases: unknown[] = [
      { id },
      { id, answers: { color: "Red" } },
      { id, answers: { color: [1] } },
      { id, answers: ["Red"] },
      { id, cancel: false },
      { id, cancel: true, answers: { color: ["Red"] } },
      { id, cancel: true, resolutionId: "r1" },
      { id, answers: { color: ["Red"] }, resolutionId: "" },
      { id, answers: { color: ["Red"] }, resolutionId: "r".repeat(129) },
      { id, answers: { color: ["Red"] }, resolutionId: 7 },
      { id, answers: { color: ["Red"] }, surprise: true },
      { answers: { color: ["Red"] } },
    ];
    for (const params of resolveCases) await gwErr(app, alice.apiKey, "question.resolve", params, "INVALID_PARAMS");
    for (const params of [{}, { id: "" }, { id, extra: 1 }]) await gwErr(app, alice.apiKey, "question.get", params, "INVALID_PARAMS");
    await gwErr(app, alice.apiKey, "question.list", { status: "all" }, "INVALID_PARAMS");
    await gwErr(app, alice.apiKey, "question.waitAnswer", { id, timeoutMs: 1000, surprise: 1 }, "INVALID_PARAMS");
    expect(await questionCounts(app)).toEqual(after);
    expect((await get(alice.apiKey, id)).status).toBe("pending");
  });

  it("bodies that are not JSON are refused with reason INVALID_PARAMS; an unknown method is 404 {detail, code}; no key is 401", async () => {
    const malformed = await app.api("/v1/gateway/question.request", { key: alice.apiKey, rawBody: "{nope", headers: { "content-type": "application/json" } });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST", details: { reason: "INVALID_PARAMS" } } });
    const text = await app.api("/v1/gateway/question.list", { key: alice.apiKey, rawBody: "{}", headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({ ok: false, error: { details: { reason: "INVALID_PARAMS" } } });

    for (const method of ["question.nope", "question", "answer.resolve", "question.request.x", "constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const res = await app.api(`/v1/gateway/${method}`, { key: alice.apiKey, body: {} });
      await expectError(res, 404, "not_found");
    }
    const unauthenticated = await app.api("/v1/gateway/question.list", { body: {} });
    expect(unauthenticated.status).toBe(401);
    expect(await unauthenticated.json()).toEqual({ detail: "Authentication required", code: "unauthenticated" });
    await expectError(await app.api("/v1/gateway/question.list", { key: "nope", body: {} }), 401, "unauthenticated");
  });

  it("sessionId and responseId must be the caller's own; a question bound to a response appears on its frames", async () => {
    const env = await invoke(app, alice.apiKey, "hello");
    await gwErr(app, bob.apiKey, "question.request", { questions: [pick()], sessionId: env.sessionId }, "INVALID_PARAMS");
    await gwErr(app, bob.apiKey, "question.request", { questions: [pick()], responseId: env.id }, "INVALID_PARAMS");
    await gwErr(app, alice.apiKey, "question.request", { questions: [pick()], sessionId: "sess_nope" }, "INVALID_PARAMS");
    const other = await invoke(app, alice.apiKey, "again");
    await gwErr(app, alice.apiKey, "question.request", { questions: [pick()], sessionId: other.sessionId, responseId: env.id }, "INVALID_PARAMS");

    const { id } = await ask(alice.apiKey, { sessionId: env.sessionId, responseId: env.id });
    expect(await get(alice.apiKey, id)).toMatchObject({ sessionId: env.sessionId, responseId: env.id, kind: "gateway" });
    await gwOk(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] } });
    const trajectory = await trpcQuery(app, alice.apiKey, "responses.get", { responseId: env.id });
    expect(trajectory.status).toBe(200);
    const events = (trajectory.body.result!.data as { trajectory: Array<{ type: string; frameSeq: number | null; data: { question?: TRecord } }> }).trajectory;
    const requested = events.find((e) => e.type === "question.requested");
    const resolved = events.find((e) => e.type === "question.resolved");
    expect(requested?.data.question).toMatchObject({ id, status: "pending" });
    expect(resolved?.data.question).toMatchObject({ id, status: "answered", answers: { color: ["Red"] } });
    expect(requested?.frameSeq).not.toBeNull();
    expect(resolved?.frameSeq).not.toBeNull();
  });
});

describe(`roles and visibility (${testDbKind()})`, () => {
  it("another member cannot see, wait on, answer or cancel a member's question (QUESTION_NOT_FOUND)", async () => {
    const { id } = await ask(alice.apiKey);
    const counts = await questionCounts(app);
    await gwErr(app, bob.apiKey, "question.get", { id }, "QUESTION_NOT_FOUND");
    await gwErr(app, bob.apiKey, "question.waitAnswer", { id, timeoutMs: 1000 }, "QUESTION_NOT_FOUND");
    await gwErr(app, bob.apiKey, "question.resolve", { id, answers: { color: ["Red"] } }, "QUESTION_NOT_FOUND");
    await gwErr(app, bob.apiKey, "question.resolve", { id, cancel: true }, "QUESTION_NOT_FOUND");
    expect((await list(bob.apiKey)).map((q) => q.id)).not.toContain(id);
    expect(await questionCounts(app)).toEqual(counts);
    expect((await get(alice.apiKey, id)).status).toBe("pending");
  });

  it("an auditor reads everything and answers nothing (403)", async () => {
    const { id } = await ask(alice.apiKey);
    expect((await get(auditor.apiKey, id)).status).toBe("pending");
    expect((await list(auditor.apiKey)).map((q) => q.id)).toContain(id);
    const counts = await questionCounts(app);
    const answer = await gateway(app, auditor.apiKey, "question.resolve", { id, answers: { color: ["Red"] } });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ ok: false, error: { details: { reason: expect.any(String) } } });
    expect((await gateway(app, auditor.apiKey, "question.resolve", { id, cancel: true })).status).toBe(403);
    const asking = await gateway(app, auditor.apiKey, "question.request", { questions: [pick()] });
    expect(asking.status).toBe(403);
    expect(await questionCounts(app)).toEqual(counts);
    expect((await get(alice.apiKey, id)).status).toBe("pending");
    const viaTrpc = await trpcMutation(app, auditor.apiKey, "question.resolve", { id, answers: { color: ["Red"] } });
    expect(viaTrpc.status).toBe(403);
    expect(viaTrpc.body.error?.data.code).toBe("FORBIDDEN");
  });

  it("an operator sees the workspace's pending questions and may answer a member's; the record names the operator", async () => {
    const { id } = await ask(alice.apiKey);
    expect((await list(operator.apiKey)).map((q) => q.id)).toContain(id);
    const waiting = gwOk(app, alice.apiKey, "question.waitAnswer", { id, timeoutMs: 10_000 });
    expect(await gwOk(app, operator.apiKey, "question.resolve", { id, answers: { color: ["Red"] } })).toEqual({ status: "answered", answers: { color: ["Red"] } });
    expect(await waiting).toEqual({ status: "answered", answers: { color: ["Red"] } });
    const record = await get(alice.apiKey, id);
    expect(record).toMatchObject({ status: "answered", requester: { userId: alice.userId }, answeredBy: { userId: operator.userId, name: "Olga Operator" } });
    const late = await gwErr(app, alice.apiKey, "question.resolve", { id, answers: { color: ["blue"] } }, "QUESTION_ALREADY_TERMINAL");
    expect(late.details.answeredBy).toEqual({ userId: operator.userId, name: "Olga Operator", email: operator.email });
  });
});

describe(`races (${testDbKind()})`, () => {
  it("two people answering at once over HTTP and tRPC: one commits, the other gets QUESTION_ALREADY_TERMINAL naming the winner", async () => {
    for (let round = 0; round < 8; round++) {
      const { id } = await ask(alice.apiKey);
      const [viaHttp, viaTrpc] = await Promise.all([
        gateway(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] } }),
        trpcMutation(app, operator.apiKey, "question.resolve", round % 2 ? { id, answers: { color: ["blue"] } } : { id, cancel: true }),
      ]);
      const httpWon = viaHttp.body.ok;
      const trpcWon = viaTrpc.status === 200;
      expect([httpWon, trpcWon].filter(Boolean), `round ${round}: ${JSON.stringify([viaHttp, viaTrpc])}`).toHaveLength(1);
      const record = await get(alice.apiKey, id);
      if (httpWon) {
        expect(record).toMatchObject({ status: "answered", answers: { color: ["Red"] }, answeredBy: { userId: alice.userId } });
        expect(viaTrpc.status).toBe(409);
        expect(viaTrpc.body.error?.data).toMatchObject({ code: "CONFLICT", reason: "QUESTION_ALREADY_TERMINAL", details: { answeredBy: { userId: alice.userId, name: "Alice" } } });
      } else {
        expect(record.answeredBy).toEqual({ userId: operator.userId, name: "Olga Operator", email: operator.email });
        expect(record.status).toBe(round % 2 ? "answered" : "cancelled");
        expect(viaHttp.status).toBe(400);
        expect(viaHttp.body).toMatchObject({ ok: false, error: { details: { reason: "QUESTION_ALREADY_TERMINAL", answeredBy: { userId: operator.userId, name: "Olga Operator" } } } });
      }
    }
  });

  it("many concurrent answers: exactly one commits", async () => {
    const { id } = await ask(alice.apiKey);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => gateway(app, i % 2 ? alice.apiKey : operator.apiKey, "question.resolve", { id, answers: { color: [i % 3 ? "Red" : "blue"] } })),
    );
    const winners = results.filter((r) => r.body.ok);
    expect(winners).toHaveLength(1);
    const record = await get(alice.apiKey, id);
    for (const loser of results.filter((r) => !r.body.ok)) {
      expect(loser.status).toBe(400);
      expect(loser.body).toMatchObject({ ok: false, error: { details: { reason: "QUESTION_ALREADY_TERMINAL", answeredBy: record.answeredBy } } });
    }
    expect(record.answers).toEqual((winners[0]!.body as unknown as { payload: { answers: unknown } }).payload.answers);
  });
});

describe(`Gateway question methods as tRPC procedures (${testDbKind()})`, () => {
  it("request, get, list, waitAnswer and resolve work over /api/trpc with a Bearer key", async () => {
    const created = await trpcMutation(app, alice.apiKey, "question.request", { questions: [pick()], timeoutMs: 60_000 });
    expect(created.status).toBe(200);
    const { id, expiresAtMs } = created.body.result!.data as { id: string; expiresAtMs: number };
    expect(id).toMatch(/^ask_[0-9a-f]{32}$/);
    expect(typeof expiresAtMs).toBe("number");

    const got = await trpcQuery(app, alice.apiKey, "question.get", { id });
    expect(got.status).toBe(200);
    expect(got.body.result?.data).toMatchObject({ question: { id, status: "pending", kind: "gateway" } });
    const listed = await trpcQuery(app, alice.apiKey, "question.list");
    expect(((listed.body.result!.data as { questions: TRecord[] }).questions ?? []).map((q) => q.id)).toContain(id);
    const pending = await trpcQuery(app, alice.apiKey, "question.waitAnswer", { id, timeoutMs: 1000 });
    expect(pending.body.result?.data).toEqual({ status: "pending" });

    const waiters = watchWaiters(app);
    try {
      const waiting = trpcQuery(app, alice.apiKey, "question.waitAnswer", { id, timeoutMs: 600_000 });
      await waiters.until(1);
      const resolved = await trpcMutation(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] } });
      expect(resolved.status).toBe(200);
      expect(resolved.body.result?.data).toEqual({ status: "answered", answers: { color: ["Red"] } });
      expect((await waiting).body.result?.data).toEqual({ status: "answered", answers: { color: ["Red"] } });
    } finally {
      waiters.stop();
    }
    // tRPC resolutions are recorded as made through the console.
    expect((await get(alice.apiKey, id)).answeredVia).toBe("console");
  });

  it("errors carry the tRPC code, the HTTP status and the gateway reason; bad input changes nothing", async () => {
    const counts = await questionCounts(app);
    const missing = await trpcQuery(app, alice.apiKey, "question.get", { id: "ask_missing" });
    expect(missing.status).toBe(404);
    expect(missing.body.error?.data).toMatchObject({ code: "NOT_FOUND", reason: "QUESTION_NOT_FOUND" });
    expect(missing.body.error?.data.stack).toBeUndefined();

    for (const input of [{ questions: [] }, { questions: [pick(), pick("b"), pick("c"), pick("d")] }, { questions: [pick()], timeoutMs: 10 }, { questions: [{ ...pick(), questionId: "X" }] }]) {
      const bad = await trpcMutation(app, alice.apiKey, "question.request", input);
      expect(bad.status).toBe(400);
      expect(bad.body.error?.data.code).toBe("BAD_REQUEST");
    }
    const { id } = (await trpcMutation(app, alice.apiKey, "question.request", { questions: [pick()] })).body.result!.data as { id: string };
    const invalid = await trpcMutation(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Purple"] } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error?.data).toMatchObject({ reason: "QUESTION_INVALID_ANSWER" });
    const foreign = await trpcMutation(app, bob.apiKey, "question.resolve", { id, answers: { color: ["Red"] } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error?.data.reason).toBe("QUESTION_NOT_FOUND");
    expect(await questionCounts(app)).toEqual({ ...counts, questions: counts.questions + 1 });

    const unauthenticated = await fetch(`${app.url}/api/trpc/question.list`);
    expect(unauthenticated.status).toBe(401);
  });
});

describe(`a gateway question tied to a run stays structured (${testDbKind()})`, () => {
  it("cancelling a question does not touch the run it names", async () => {
    const env = await invoke(app, alice.apiKey, script([{ text: "hi" }]));
    const { id } = await ask(alice.apiKey, { responseId: env.id, sessionId: env.sessionId });
    expect(await gwOk(app, alice.apiKey, "question.resolve", { id, cancel: true })).toEqual({ status: "cancelled" });
    const after = await app.api(`/v1/responses/${env.id}?sessionId=${env.sessionId}`, { key: alice.apiKey });
    expect(((await after.json()) as { status: string }).status).toBe("completed");
  });
});
