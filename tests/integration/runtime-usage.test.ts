import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, execTurn, invoke, ok200, readSse, script } from "./helpers";
import { eventsOf, replayFrames, runtimeScript, trpcGet } from "./runtime-helpers";

let app: TTestApp;
let member: TTestUser;
let other: TTestUser;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  member = await app.user("member");
  other = await app.user("member");
  operator = await app.user("operator");
});
afterAll(async () => {
  await app?.close();
});

type TSessionUsage = { sessionId: string; outputTokens: number; inputTokens: number; responses: Array<{ id: string; outputTokens: number; inputTokens: number }> };

describe(`live output-token usage across a retry (${testDbKind()})`, () => {
  it("5 tokens, an approval suspension, then 7: usage frames total 5 then 12 and the envelope says 12", async () => {
    const env = await invoke(app, member.apiKey, runtimeScript([{ ...execTurn("true"), usage: { outputTokens: 5 } }, { text: "done", usage: { outputTokens: 7 } }]));
    expect(env.status).toBe("requires_action");
    expect(env.usage.outputTokens).toBe(5);
    const done = await ok200(await decide(app, operator.apiKey, env.requiredAction?.id as string, "approve"));
    expect(done.status).toBe("completed");
    expect(done.usage.outputTokens).toBe(12);

    const frames = await replayFrames(app, member.apiKey, env);
    const usage = frames.filter((f) => f.type === "response.usage");
    expect(usage.map((f) => [f.outputTokens, f.totalOutputTokens])).toEqual([
      [5, 5],
      [7, 12],
    ]);
    // The first usage frame precedes the suspension; the second comes with the resumed turn.
    const at = (pred: (i: number) => boolean) => frames.findIndex((_, i) => pred(i));
    expect(at((i) => frames[i]?.type === "approval.requested")).toBeGreaterThan(frames.indexOf(usage[0] as never));
    expect(at((i) => frames[i]?.type === "approval.resolved")).toBeLessThan(frames.indexOf(usage[1] as never));
    // model.turn events carry the per-response count, not a running total.
    expect((await eventsOf(app, env.id, "model.turn")).map((e) => (e.data as { outputTokens: number }).outputTokens)).toEqual([5, 7]);
  });

  it("a turn with outputTokens 0 (or no usage) emits no usage frame and adds nothing", async () => {
    const env = await invoke(app, member.apiKey, runtimeScript([{ toolCalls: [{ name: "echo", arguments: { text: "x" } }], usage: { outputTokens: 0 } }, { text: "ok" }]));
    expect(env.status).toBe("completed");
    expect(env.usage.outputTokens).toBe(0);
    const frames = await replayFrames(app, member.apiKey, env);
    expect(frames.filter((f) => f.type === "response.usage")).toEqual([]);
  });

  it("input tokens are counted in the envelope but never published as live usage", async () => {
    const env = await invoke(app, member.apiKey, runtimeScript([{ text: "ok", usage: { inputTokens: 40, outputTokens: 3 } }]));
    expect(env.usage).toMatchObject({ inputTokens: 40, outputTokens: 3 });
    const frames = await replayFrames(app, member.apiKey, env);
    expect(frames.filter((f) => f.type === "response.usage").map((f) => [f.outputTokens, f.totalOutputTokens])).toEqual([[3, 3]]);
  });

  it("streamed usage frames arrive live in the SSE of the invocation", async () => {
    const res = await app.api("/v1/responses", { key: member.apiKey, body: { input: script([{ text: "a", usage: { outputTokens: 2 } }]), stream: true } });
    const sse = readSse(res);
    await sse.done;
    expect(sse.events.filter((e) => e.event === "response.usage").map((e) => e.data.totalOutputTokens)).toEqual([2]);
  });

  it("tRPC responses.sessionUsage sums every response of the session and is owner-scoped", async () => {
    const first = await invoke(app, member.apiKey, runtimeScript([{ ...execTurn("true"), usage: { outputTokens: 5 } }, { text: "done", usage: { outputTokens: 7 } }]));
    await ok200(await decide(app, operator.apiKey, first.requiredAction?.id as string, "approve"));
    const second = await invoke(app, member.apiKey, runtimeScript([{ text: "more", usage: { outputTokens: 30, inputTokens: 11 } }]), { sessionId: first.sessionId });
    expect(second.sessionId).toBe(first.sessionId);

    const mine = await trpcGet(app, member.apiKey, "responses.sessionUsage", { sessionId: first.sessionId });
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    const data = mine.body.result?.data as TSessionUsage;
    expect(data).toMatchObject({ sessionId: first.sessionId, outputTokens: 42, inputTokens: 11 });
    expect(data.responses.map((r) => [r.id, r.outputTokens]).sort()).toEqual(
      [
        [first.id, 12],
        [second.id, 30],
      ].sort(),
    );
    // An operator reads it too; another member gets NOT_FOUND, as for an unknown session.
    expect((await trpcGet(app, operator.apiKey, "responses.sessionUsage", { sessionId: first.sessionId })).status).toBe(200);
    const theirs = await trpcGet(app, other.apiKey, "responses.sessionUsage", { sessionId: first.sessionId });
    expect(theirs.status).toBe(404);
    expect((await trpcGet(app, member.apiKey, "responses.sessionUsage", { sessionId: "session_unknown" })).status).toBe(404);
    const anonymous = await fetch(`${app.url}/api/trpc/responses.sessionUsage?input=${encodeURIComponent(JSON.stringify({ sessionId: first.sessionId }))}`);
    expect(anonymous.status).toBe(401);
  });
});
