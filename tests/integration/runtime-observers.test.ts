import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import type { TAttemptLifecycleEvent, TAttemptObserver } from "../../server/core/runtime";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, execTurn, invoke, LiveClient, ok200, readSse, script, waitUntil } from "./helpers";
import { eventsOf, runtimeScript, trajectory } from "./runtime-helpers";

let app: TTestApp;
let operator: TTestUser;
type TEvent = TAttemptLifecycleEvent & { responseId: string };
const added: TAttemptObserver<TEvent>[] = [];

beforeAll(async () => {
  // A run held by an observer must fail fast, not after the default two-minute boundary wait.
  app = await startTestApp({ boundaryTimeoutMs: 15_000 });
  // Starts runs and decides them: an operator may approve its own (separation of duties is tested elsewhere).
  operator = await app.user("operator");
});
afterEach(() => {
  const observers = app.deps.host.observers;
  for (const o of added.splice(0)) observers.splice(observers.indexOf(o), 1);
});
afterAll(async () => {
  await app?.close();
});

function observe(observer: TAttemptObserver<TEvent>): void {
  added.push(observer);
  app.deps.host.observers.push(observer);
}

/** A recording observer: every lifecycle event, by response. */
function recorder() {
  const events: TEvent[] = [];
  observe((e) => {
    events.push(e);
  });
  return {
    of: (responseId: string) => events.filter((e) => e.responseId === responseId),
    phases: (responseId: string) => events.filter((e) => e.responseId === responseId).map((e) => e.phase),
  };
}

const ATTEMPT = ["admitted", "preparing", "running", "settling", "settled"];

describe(`lifecycle observers (${testDbKind()})`, () => {
  it("a throwing and an async-rejecting observer do not stop a run; a recording observer sees every phase once, in order", async () => {
    observe(() => {
      throw new Error("observer bug");
    });
    observe(async () => {
      await new Promise((r) => setTimeout(r, 5));
      throw new Error("async observer bug");
    });
    const rec = recorder();
    const env = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "echo", arguments: { text: "a" } }] }, { text: "still fine" }]));
    expect(env).toMatchObject({ status: "completed", outputText: "still fine" });
    await waitUntil(() => rec.phases(env.id).includes("settled"), 30_000, "settled");
    expect(rec.phases(env.id)).toEqual(ATTEMPT);
    const events = rec.of(env.id);
    expect(events.map((e) => e.previousPhase)).toEqual([null, "admitted", "preparing", "running", "settling"]);
    for (let i = 1; i < events.length; i++) expect((events[i] as TEvent).atMs).toBeGreaterThanOrEqual((events[i - 1] as TEvent).atMs);
    expect(events.every((e) => e.type === "attempt.lifecycle")).toBe(true);
    // Failures are reported in the log, not to the client.
    await waitUntil(() => app.logs().includes("async observer bug"), 30_000, "logged observer failure");
    expect(app.logs()).toContain("a lifecycle observer failed");
    // The trajectory recorded the same phases, whatever the observers did.
    await waitUntil(async () => (await eventsOf(app, env.id, "transcript.anchor")).length === 1, 30_000, "anchor");
    expect((await eventsOf(app, env.id, "harness.attempt.phase")).map((e) => (e.data as { phase: string }).phase)).toEqual(ATTEMPT);
  });

  it("an approval run: the first attempt ends suspended, the resumed attempt goes through every phase once", async () => {
    observe(() => {
      throw new Error("observer bug");
    });
    const rec = recorder();
    const env = await invoke(app, operator.apiKey, script([execTurn("true"), { text: "done" }]));
    expect(env.status).toBe("requires_action");
    await waitUntil(() => rec.phases(env.id).includes("suspended"), 30_000, "suspended");
    expect(rec.phases(env.id)).toEqual(["admitted", "preparing", "running", "suspended"]);
    const done = await ok200(await decide(app, operator.apiKey, env.requiredAction?.id as string, "approve"));
    expect(done.status).toBe("completed");
    await waitUntil(() => rec.phases(env.id).includes("settled"), 30_000, "settled");
    expect(rec.phases(env.id)).toEqual(["admitted", "preparing", "running", "suspended", ...ATTEMPT]);
  });

  it("an observer that never settles holds neither the suspension, the resume nor the settlement", async () => {
    const hanging: TAttemptObserver<TEvent> = () => new Promise<void>(() => {});
    observe(hanging);
    const rec = recorder();
    const env = await invoke(app, operator.apiKey, script([execTurn("true"), { text: "resumed" }]));
    expect(env.status).toBe("requires_action");
    const done = await ok200(await decide(app, operator.apiKey, env.requiredAction?.id as string, "approve"));
    expect(done).toMatchObject({ status: "completed", outputText: "resumed" });
    await waitUntil(async () => (await eventsOf(app, env.id, "transcript.anchor")).length === 1, 30_000, "anchor");
    await waitUntil(() => app.deps.host.activeCount === 0, 30_000, "lease released");
    expect(rec.phases(env.id)).toEqual(["admitted", "preparing", "running", "suspended", ...ATTEMPT]);
  });

  it("an attempt ended by a cancel reaches settled once; observers never see it settling", async () => {
    const rec = recorder();
    // A command that never ends by itself (nor by its exec timeout) while the test runs: only the cancel ends it.
    const env = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "exec", arguments: { command: "echo $$ > pid.txt; exec sleep 3600", timeoutMs: 600_000 } }] }, { text: "never" }]));
    const decided = decide(app, operator.apiKey, env.requiredAction?.id as string, "approve");
    await waitUntil(() => rec.phases(env.id).filter((p) => p === "running").length === 2, 30_000, "second attempt running");
    const cancelled = await ok200(await app.api(`/v1/responses/${env.id}/cancel`, { key: operator.apiKey, body: {} }));
    expect(cancelled.status).toBe("cancelled");
    expect((await ok200(await decided)).status).toBe("cancelled");
    await waitUntil(() => rec.phases(env.id).includes("settled"), 30_000, "settled");
    expect(rec.phases(env.id)).toEqual(["admitted", "preparing", "running", "suspended", "admitted", "preparing", "running", "settled"]);
    await waitUntil(() => app.deps.host.activeCount === 0, 30_000, "attempt released");
  });
});

describe(`trajectory capability and agent-end (${testDbKind()})`, () => {
  it("after completion there is exactly one transcript.anchor, after the terminal frame, pointing at it", async () => {
    const env = await invoke(app, operator.apiKey, script([{ text: "anchored" }]));
    const anchors = await waitUntil(async () => {
      const found = await eventsOf(app, env.id, "transcript.anchor");
      return found.length > 0 ? found : null;
    }, 30_000, "anchor");
    expect(anchors).toHaveLength(1);
    const anchor = anchors[0];
    expect(anchor?.data).toMatchObject({ status: "completed", outputItems: 1 });
    const all = await trajectory(app, env.id);
    const terminal = all.find((e) => e.type === "response.completed");
    if (!terminal || !anchor) throw new Error("missing terminal frame or anchor");
    expect(anchor.seq).toBeGreaterThan(terminal.seq);
    expect((anchor.data as { lastSeq: number }).lastSeq).toBeGreaterThanOrEqual(terminal.seq);
    // The lease was released after the anchor.
    await waitUntil(() => app.deps.host.activeCount === 0, 30_000, "attempt released");
  });

  it("harness trajectory rows carry the session; text and thinking deltas carry itemId and occurrenceId", async () => {
    const res = await app.api("/v1/responses", {
      key: operator.apiKey,
      body: { input: runtimeScript([{ reasoning: "think", text: "one", toolCalls: [{ name: "echo", arguments: { text: "x" } }] }, { text: "two" }]), stream: true },
    });
    const sse = readSse(res);
    await sse.done;
    const deltas = sse.events.filter((e) => e.event === "response.text.delta").map((e) => e.data);
    expect(deltas.map((d) => [d.delta, d.itemId, d.occurrenceId])).toEqual([
      ["one", "msg_0", "occ_0_0"],
      ["two", "msg_1", "occ_1_0"],
    ]);
    const thinking = sse.events.filter((e) => e.event === "response.thinking.delta").map((e) => e.data);
    expect(thinking.map((d) => [d.itemId, d.occurrenceId])).toEqual([["rsn_0", "occ_rsn_0_0"]]);
    const responseId = deltas[0]?.responseId as string;
    const sessionId = deltas[0]?.sessionId as string;
    await waitUntil(async () => (await eventsOf(app, responseId, "transcript.anchor")).length === 1, 30_000, "anchor");
    const harness = (await trajectory(app, responseId)).filter((e) => e.type.startsWith("harness."));
    expect(harness.length).toBeGreaterThanOrEqual(5);
    for (const e of harness) {
      expect(e.sessionId).toBe(sessionId);
      expect((e.data as { sessionId: string }).sessionId).toBe(sessionId);
      expect(e.frameSeq).toBeNull(); // never a wire frame
    }
    // Harness events never leak onto the wire.
    expect(sse.events.some((e) => e.event.startsWith("harness."))).toBe(false);
  });

  it("the same item identities arrive over the WebSocket", async () => {
    const client = await LiveClient.open(app, operator.apiKey);
    client.send({ type: "response.create", input: script([{ text: "over ws" }]) });
    const delta = await client.waitFor((f) => f.type === "response.text.delta");
    expect(delta).toMatchObject({ delta: "over ws", itemId: "msg_0", occurrenceId: "occ_0_0" });
    client.close();
  });

  it("a run cancelled while suspended holds no attempt", async () => {
    const env = await invoke(app, operator.apiKey, script([execTurn("true"), { text: "never" }]));
    const cancelled = await ok200(await app.api(`/v1/responses/${env.id}/cancel`, { key: operator.apiKey, body: {} }));
    expect(cancelled.status).toBe("cancelled");
    expect(app.deps.host.activeCount).toBe(0);
    expect((await eventsOf(app, env.id, "harness.attempt.phase")).map((e) => (e.data as { phase: string }).phase)).toEqual(["admitted", "preparing", "running", "suspended"]);
  });
});
