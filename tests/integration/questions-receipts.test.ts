import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { invoke, LiveClient, readSse, rows, script, sleep } from "./helpers";
import { gateway, gwErr, gwOk, pick, tablesContaining, trpcMutation, trpcQuery, watchWaiters } from "./questions-helpers";

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

type TWait = { status: string; answers?: Record<string, string[]>; resolutionId?: string };

const ask = async (params: Record<string, unknown> = {}) => (await gwOk<{ id: string }>(app, alice.apiKey, "question.request", { questions: [pick()], ...params })).id;
/** A waiter whose own bound (unless given) is far longer than a test may take: only the question's change ends it. */
const wait = (id: string, extra: Record<string, unknown> = {}, key = alice.apiKey) => gwOk<TWait>(app, key, "question.waitAnswer", { id, timeoutMs: 600_000, ...extra });

/** Runs `during` with a watch on the waiters (so a test can know they wait before it answers). */
async function watching<T>(during: (waiters: ReturnType<typeof watchWaiters>) => Promise<T>): Promise<T> {
  const waiters = watchWaiters(app);
  try {
    return await during(waiters);
  } finally {
    waiters.stop();
  }
}
const receipt = (tag: string) => `rcpt-${tag}-${Math.random().toString(36).slice(2)}`;

/** Every place a receipt must never appear: records, lookups, lists (HTTP and tRPC). */
async function expectNowhereVisible(id: string, resolutionId: string): Promise<void> {
  const views = [
    await gwOk(app, alice.apiKey, "question.get", { id }),
    await gwOk(app, operator.apiKey, "question.get", { id }),
    await gwOk(app, alice.apiKey, "question.list", {}),
    (await trpcQuery(app, alice.apiKey, "question.get", { id })).body,
    (await trpcQuery(app, alice.apiKey, "question.list", { status: "all" })).body,
  ];
  for (const view of views) {
    expect(JSON.stringify(view)).not.toContain(resolutionId);
    expect(JSON.stringify(view)).not.toContain("resolutionId");
  }
  expect(await tablesContaining(app, resolutionId)).toEqual([]);
}

describe(`resolution receipts (${testDbKind()})`, () => {
  it("a waiter that asks gets the receipt of the submission that committed; the resolve result and ordinary waiters never carry it", async () => {
    const id = await ask();
    const rid = receipt("a");
    await watching(async (waiters) => {
      const withReceipt = wait(id, { includeResolutionId: true });
      const ordinary = wait(id);
      const explicitFalse = wait(id, { includeResolutionId: false });
      await waiters.until(3);
      const resolved = await gwOk(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] }, resolutionId: rid });
      expect(resolved).toEqual({ status: "answered", answers: { color: ["Red"] } });
      expect(await withReceipt).toEqual({ status: "answered", answers: { color: ["Red"] }, resolutionId: rid });
      expect(await ordinary).toEqual({ status: "answered", answers: { color: ["Red"] } });
      expect(await explicitFalse).toEqual({ status: "answered", answers: { color: ["Red"] } });
    });
    await expectNowhereVisible(id, rid);
  });

  it("a waiter arriving after the commit still gets the receipt (HTTP and tRPC)", async () => {
    const id = await ask();
    const rid = receipt("late");
    await gwOk(app, alice.apiKey, "question.resolve", { id, answers: { color: ["blue"] }, resolutionId: rid });
    await sleep(1200);
    expect(await wait(id, { includeResolutionId: true, timeoutMs: 1000 })).toEqual({ status: "answered", answers: { color: ["blue"] }, resolutionId: rid });
    const viaTrpc = await trpcQuery(app, alice.apiKey, "question.waitAnswer", { id, includeResolutionId: true, timeoutMs: 1000 });
    expect(viaTrpc.body.result?.data).toEqual({ status: "answered", answers: { color: ["blue"] }, resolutionId: rid });
    expect(await wait(id, { timeoutMs: 1000 })).toEqual({ status: "answered", answers: { color: ["blue"] } });
  });

  it("a waiter arriving right as the submission commits gets the receipt", async () => {
    for (let round = 0; round < 20; round++) {
      const id = await ask();
      const rid = receipt(`edge${round}`);
      const waiters: Array<Promise<TWait>> = [];
      const resolving = gwOk(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] }, resolutionId: rid });
      for (let i = 0; i < 8; i++) {
        waiters.push(wait(id, { includeResolutionId: true }));
        await sleep(2);
      }
      await resolving;
      waiters.push(wait(id, { includeResolutionId: true, timeoutMs: 1000 }));
      for (const result of await Promise.all(waiters)) {
        expect(result, `round ${round}`).toEqual({ status: "answered", answers: { color: ["Red"] }, resolutionId: rid });
      }
    }
  });

  it("the receipt is retained for at least 15 s after the commit", async () => {
    const id = await ask();
    const rid = receipt("retained");
    await gwOk(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] }, resolutionId: rid });
    await sleep(15_500);
    expect(await wait(id, { includeResolutionId: true, timeoutMs: 1000 })).toEqual({ status: "answered", answers: { color: ["Red"] }, resolutionId: rid });
  }, 40_000);

  it("another actor's answer gives no matching receipt, even with identical text", async () => {
    const id = await ask();
    const mine = receipt("mine");
    const result = await watching(async (waiters) => {
      const waiting = wait(id, { includeResolutionId: true });
      await waiters.until(1);
      // The operator answers first, with the same value and no receipt; my later submission loses.
      await gwOk(app, operator.apiKey, "question.resolve", { id, answers: { color: ["Red"] } });
      const late = await gwErr(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] }, resolutionId: mine }, "QUESTION_ALREADY_TERMINAL");
      expect(late.details.answeredBy).toEqual({ userId: operator.userId, name: "Olga Operator", email: operator.email });
      return waiting;
    });
    expect(result).toEqual({ status: "answered", answers: { color: ["Red"] } });
    expect(await wait(id, { includeResolutionId: true, timeoutMs: 1000 })).toEqual({ status: "answered", answers: { color: ["Red"] } });
    await expectNowhereVisible(id, mine);

    // With its own receipt, the other actor's answer shows only that receipt, never mine.
    const id2 = await ask();
    const theirs = receipt("theirs");
    await gwOk(app, operator.apiKey, "question.resolve", { id: id2, answers: { color: ["Red"] }, resolutionId: theirs });
    await gwErr(app, alice.apiKey, "question.resolve", { id: id2, answers: { color: ["Red"] }, resolutionId: mine }, "QUESTION_ALREADY_TERMINAL");
    const seen = await wait(id2, { includeResolutionId: true, timeoutMs: 1000 });
    expect(seen.resolutionId).toBe(theirs);
    expect(seen.resolutionId).not.toBe(mine);
  });

  it("racing submissions with different receipts: waiters see exactly the winner's receipt", async () => {
    for (let round = 0; round < 6; round++) {
      const id = await ask();
      const a = receipt(`ra${round}`);
      const b = receipt(`rb${round}`);
      const [waiting, [first, second]] = await watching(async (waiters) => {
        const waiting = wait(id, { includeResolutionId: true });
        await waiters.until(1);
        return [
          waiting,
          await Promise.all([
            gateway(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] }, resolutionId: a }),
            trpcMutation(app, operator.apiKey, "question.resolve", { id, answers: { color: ["blue"] }, resolutionId: b }),
          ]),
        ] as const;
      });
      const aWon = first.body.ok;
      expect([aWon, second.status === 200].filter(Boolean)).toHaveLength(1);
      const expected = aWon ? { status: "answered", answers: { color: ["Red"] }, resolutionId: a } : { status: "answered", answers: { color: ["blue"] }, resolutionId: b };
      expect(await waiting).toEqual(expected);
      expect(await wait(id, { includeResolutionId: true, timeoutMs: 1000 })).toEqual(expected);
      expect(JSON.stringify(second.body)).not.toContain(a);
      expect(JSON.stringify(second.body)).not.toContain(b);
      expect(JSON.stringify(first.body)).not.toContain(aWon ? a : b);
    }
  });

  it("a rejected or refused submission records no receipt; cancelled and expired waiters get none", async () => {
    const id = await ask();
    const rejected = receipt("rejected");
    await gwErr(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Purple"] }, resolutionId: rejected }, "QUESTION_INVALID_ANSWER");
    await gwErr(app, alice.apiKey, "question.resolve", { id, answers: { nope: ["x"] }, resolutionId: rejected }, "QUESTION_INVALID_ANSWER");
    expect(await wait(id, { includeResolutionId: true, timeoutMs: 1000 })).toEqual({ status: "pending" });
    await gwOk(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] } });
    expect(await wait(id, { includeResolutionId: true, timeoutMs: 1000 })).toEqual({ status: "answered", answers: { color: ["Red"] } });
    await expectNowhereVisible(id, rejected);

    const cancelled = await ask();
    await gwOk(app, alice.apiKey, "question.resolve", { id: cancelled, cancel: true });
    expect(await wait(cancelled, { includeResolutionId: true, timeoutMs: 1000 })).toEqual({ status: "cancelled" });

    // Expiry by the server's clock: the waiter (whose own bound the test cannot reach) sees expired.
    const expiring = await ask({ timeoutMs: 60_000 });
    const tooLate = receipt("late");
    await watching(async (waiters) => {
      const waiting = wait(expiring, { includeResolutionId: true });
      await waiters.until(1);
      app.clock.advance(60_000 + 1000);
      try {
        expect(await waiting).toEqual({ status: "expired" });
        await gwErr(app, alice.apiKey, "question.resolve", { id: expiring, answers: { color: ["Red"] }, resolutionId: tooLate }, "QUESTION_ALREADY_TERMINAL");
      } finally {
        app.clock.reset();
      }
    });
    expect(await wait(expiring, { includeResolutionId: true, timeoutMs: 1000 })).toEqual({ status: "expired" });
  });

  it("receipts are 1–128 characters; a 128-character receipt round-trips", async () => {
    const id = await ask();
    const long = `${"r".repeat(127)}Z`;
    await gwErr(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] }, resolutionId: "" }, "INVALID_PARAMS");
    await gwErr(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] }, resolutionId: `${long}x` }, "INVALID_PARAMS");
    await gwOk(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] }, resolutionId: long });
    expect((await wait(id, { includeResolutionId: true, timeoutMs: 1000 })).resolutionId).toBe(long);
  });

  it("receipts never appear in broadcast frames (SSE, WebSocket), the trajectory, any table or the logs", async () => {
    const live = await LiveClient.open(app, alice.apiKey);
    try {
      // A run that waits on an approval, so its frames stay open; the question names it.
      live.send({ type: "response.create", input: script([{ toolCalls: [{ name: "exec", arguments: { command: "true" } }] }, { text: "done" }]), requestId: "r1" });
      const boundary = await live.waitFor((f) => f.type === "response.completed" && f.status === "requires_action");
      const env = { id: boundary.responseId, sessionId: boundary.sessionId };
      const sse = readSse(await app.api(`/v1/responses/${env.id}/events?sessionId=${env.sessionId}&after=${boundary.sequence}`, { key: alice.apiKey }));

      const id = await ask({ responseId: env.id, sessionId: env.sessionId });
      const rid = receipt("frames");
      const waiting = wait(id, { includeResolutionId: true });
      await gwOk(app, alice.apiKey, "question.resolve", { id, answers: { color: ["Red"] }, resolutionId: rid });
      expect((await waiting).resolutionId).toBe(rid);

      const resolved = await live.waitFor((f) => f.type === "question.resolved");
      expect(resolved.question).toMatchObject({ id, status: "answered" });
      const requested = await live.waitFor((f) => f.type === "question.requested");
      expect(requested.question).toMatchObject({ id, status: "pending" });
      await sse.waitFor((e) => e.event === "question.resolved");
      await sse.cancel();
      expect(sse.raw()).toContain(id);
      for (const text of [sse.raw(), JSON.stringify(live.frames), app.logs()]) {
        expect(text).not.toContain(rid);
        expect(text).not.toContain("resolutionId");
      }
      const trajectory = await trpcQuery(app, alice.apiKey, "responses.get", { responseId: env.id });
      expect(JSON.stringify(trajectory.body)).toContain("question.resolved");
      expect(JSON.stringify(trajectory.body)).not.toContain(rid);
      expect(await tablesContaining(app, rid)).toEqual([]);
      const columns = await rows<{ column_name: string }>(app, "select column_name from information_schema.columns where table_schema = 'public' and column_name ilike '%resolution%'");
      expect(columns).toEqual([]);
      live.send({ type: "response.cancel", responseId: env.id });
    } finally {
      live.close();
    }
  });

  it("ordinary waiters of run questions work the same; a receipt on a run's answer stays off its frames", async () => {
    const env = await invoke(app, alice.apiKey, script([{ toolCalls: [{ name: "ask_user", arguments: { questions: [{ id: "color", header: "Color", question: "Which?" }] } }] }, { text: "ok" }]));
    expect(env.status).toBe("requires_action");
    const id = (env.requiredAction as unknown as { id: string }).id;
    const rid = receipt("run");
    await watching(async (waiters) => {
      const waiting = wait(id, { includeResolutionId: true });
      await waiters.until(1);
      await gwOk(app, alice.apiKey, "question.resolve", { id, answers: { color: ["green"] }, resolutionId: rid });
      expect(await waiting).toEqual({ status: "answered", answers: { color: ["green"] }, resolutionId: rid });
    });
    const replay = readSse(await app.api(`/v1/responses/${env.id}/events?sessionId=${env.sessionId}`, { key: alice.apiKey }));
    await replay.done;
    expect(replay.events.at(-1)?.data.status).toBe("completed");
    expect(replay.raw()).not.toContain(rid);
    expect(await tablesContaining(app, rid)).toEqual([]);
  });
});
