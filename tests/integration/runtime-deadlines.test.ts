import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, execTurn, expectError, invoke, invokeApproval, LiveClient, ok200, script, sleep, type TBody, waitUntil, workspaceOf } from "./helpers";
import { eventsOf, modelTurns, processAlive, replayFrames, runtimeScript, settledEnvelope, steer, steeringRows, stepResult, waitForPid } from "./runtime-helpers";

let app: TTestApp;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp({ expirySweepMs: 200 });
  // Starts runs and decides them: an operator may approve its own (separation of duties is tested elsewhere).
  operator = await app.user("operator");
});
afterAll(async () => {
  await app?.close();
});

/**
 * A command that never ends by itself while a test runs (nor does its exec timeout, 600 s): when it
 * is gone, only a kill explains it, so no clock is needed to tell "killed" from "ended by itself".
 */
const SLEEPER = "echo $$ > pid.txt; exec sleep 3600";
const sleeperTurn = (then: string) => [{ toolCalls: [{ name: "exec", arguments: { command: SLEEPER, timeoutMs: 600_000 } }] }, { text: then }];

/** Phases recorded for a response, in order, split into attempts at each `admitted`. */
async function phasesByAttempt(responseId: string): Promise<string[][]> {
  const attempts: string[][] = [];
  for (const e of await eventsOf(app, responseId, "harness.attempt.phase")) {
    const phase = (e.data as { phase: string }).phase;
    if (phase === "admitted") attempts.push([]);
    attempts.at(-1)?.push(phase);
  }
  return attempts;
}

describe(`execution deadline (${testDbKind()})`, () => {
  it("an approved command that outlives timeoutMs fails the response with deadline_exceeded and is killed", async () => {
    // The budget leaves a loaded machine seconds to reach the command; the command never ends by
    // itself, so the answer (and the kill) can only come from the deadline.
    const env = await invoke(app, operator.apiKey, runtimeScript(sleeperTurn("should never be said"), { timeoutMs: 5000 }));
    expect(env.status).toBe("requires_action");
    const cwd = workspaceOf(app, env.sessionId);
    const decided = decide(app, operator.apiKey, env.requiredAction?.id as string, "approve");
    const pid = await waitForPid(cwd);
    expect(processAlive(pid)).toBe(true);
    const body = await ok200(await decided);
    expect(body.status).toBe("failed");
    expect(body.error).toMatchObject({ code: "deadline_exceeded" });
    expect(body.error?.message).toMatch(/5000 ms/);
    expect(body.outputText).not.toContain("should never be said");
    await waitUntil(() => !processAlive(pid), 30_000, `process ${pid} to be gone`);

    const final = await settledEnvelope(app, operator.apiKey, env);
    expect(final).toMatchObject({ status: "failed", error: { code: "deadline_exceeded" } });
    // The model never got a turn after the timeout.
    expect((await modelTurns(app, env.id)).map((t) => t.turn)).toEqual([0]);
    const frames = await replayFrames(app, operator.apiKey, env);
    expect(frames.filter((f) => f.type === "error").map((f) => (f.error as { code: string }).code)).toEqual(["deadline_exceeded"]);
    expect(frames.at(-1)).toMatchObject({ type: "response.completed", status: "failed" });
    // The timed-out attempt still settled exactly once.
    const attempts = await phasesByAttempt(env.id);
    expect(attempts.at(-1)).toEqual(["admitted", "preparing", "running", "settling", "settled"]);
    await expectError(await steer(app, operator.apiKey, env.id, "too late"), 409, "conflict");
  });

  it("a run that finishes within its timeout completes normally", async () => {
    // A budget no loaded machine exhausts on this: the run is well within it.
    const env = await invoke(app, operator.apiKey, runtimeScript([execTurn("sleep 0.2"), { text: "in time" }], { timeoutMs: 600_000 }));
    const body = await ok200(await decide(app, operator.apiKey, env.requiredAction?.id as string, "approve"));
    expect(body).toMatchObject({ status: "completed", outputText: "in time" });
  });

  it("timeoutMs below the minimum is rejected at the door", async () => {
    await expectError(await app.api("/v1/responses", { key: operator.apiKey, body: { input: runtimeScript([{ text: "x" }], { timeoutMs: 10 }) } }), 400, "invalid_request");
  });
});

describe(`settlement happens once per attempt: no double beginSettlement (${testDbKind()})`, () => {
  it("a completed response has one settling and one settled phase per attempt", async () => {
    const env = await invoke(app, operator.apiKey, script([{ text: "hi" }]));
    expect(env.status).toBe("completed");
    await waitUntil(async () => (await eventsOf(app, env.id, "transcript.anchor")).length === 1, 30_000, "anchor");
    expect(await phasesByAttempt(env.id)).toEqual([["admitted", "preparing", "running", "settling", "settled"]]);
    const phases = (await eventsOf(app, env.id, "harness.attempt.phase")).map((e) => (e.data as { phase: string }).phase);
    expect(phases.filter((p) => p === "settling")).toHaveLength(1);
    expect(phases.filter((p) => p === "settled")).toHaveLength(1);
  });

  it("a run with an approval: the suspended attempt never settles; the resumed one settles once", async () => {
    const { env, approval } = await invokeApproval(app, operator.apiKey, "true");
    expect((await ok200(await decide(app, operator.apiKey, approval.id, "approve"))).status).toBe("completed");
    await waitUntil(async () => (await eventsOf(app, env.id, "transcript.anchor")).length === 1, 30_000, "anchor");
    expect(await phasesByAttempt(env.id)).toEqual([
      ["admitted", "preparing", "running", "suspended"],
      ["admitted", "preparing", "running", "settling", "settled"],
    ]);
    for (const e of await eventsOf(app, env.id, "harness.attempt.phase")) {
      const data = e.data as { phase: string; previousPhase: string | null };
      if (data.phase === "admitted") expect(data.previousPhase).toBeNull();
      if (data.phase === "settled") expect(data.previousPhase).toBe("settling");
    }
  });

  it("a failed response (tool limit) also settles exactly once", async () => {
    const turns = Array.from({ length: 65 }, () => ({ toolCalls: [{ name: "echo", arguments: { text: "x" } }] }));
    const env = await invoke(app, operator.apiKey, script(turns));
    expect(env.status).toBe("failed");
    await waitUntil(async () => (await eventsOf(app, env.id, "transcript.anchor")).length === 1, 30_000, "anchor");
    expect(await phasesByAttempt(env.id)).toEqual([["admitted", "preparing", "running", "settling", "settled"]]);
  });
});

describe(`cancel during a running command (${testDbKind()})`, () => {
  it("POST cancel while an approved command runs: cancelled, the process is killed, later steering is 409", async () => {
    const env = await invoke(app, operator.apiKey, script(sleeperTurn("never")));
    expect(env.status).toBe("requires_action");
    const approval = env.requiredAction as { id: string };
    const cwd = workspaceOf(app, env.sessionId);
    const decided = decide(app, operator.apiKey, approval.id, "approve");
    const pid = await waitForPid(cwd);
    expect(processAlive(pid)).toBe(true);
    const cancelled = await ok200(await app.api(`/v1/responses/${env.id}/cancel`, { key: operator.apiKey, body: { reason: "taking too long" } }));
    expect(cancelled.status).toBe("cancelled");
    // The approval request, still waiting for the next boundary, sees the cancellation.
    const approvedBody: TBody = await ok200(await decided);
    expect(approvedBody.status).toBe("cancelled");
    await waitUntil(() => !processAlive(pid), 30_000, `process ${pid} to be gone`);
    // Once the host has let go of the attempt nothing of it can write any more: what is stored now is final.
    await waitUntil(() => !app.deps.host.isLocal(env.id), 30_000, "the attempt to end");
    const final = await settledEnvelope(app, operator.apiKey, env);
    expect(final.status).toBe("cancelled");
    expect(final.outputText).not.toContain("never");
    expect((await modelTurns(app, env.id)).map((t) => t.turn)).toEqual([0]);
    // The interrupted tool result was not recorded against the cancelled response: the step is
    // still the "running" marker the approval's transaction wrote for the claimed attempt.
    expect(await stepResult(app, env.id, "tool:call_0_0")).toEqual({ claim: expect.stringMatching(/^claim_/) });
    await expectError(await steer(app, operator.apiKey, env.id, "after cancel"), 409, "conflict");
    expect(await steeringRows(app, env.id)).toEqual([]);
    await expectError(await app.api(`/v1/responses/${env.id}/cancel`, { key: operator.apiKey, body: {} }), 409, "conflict");
    // The host let go of the attempt, whose lifecycle ended without a settlement of its own.
    await waitUntil(() => app.deps.host.activeCount === 0, 30_000, "no running attempts");
    expect((await phasesByAttempt(env.id)).at(-1)).toEqual(["admitted", "preparing", "running", "settled"]);
  });

  it("WebSocket response.cancel during a running command kills it too", async () => {
    const client = await LiveClient.open(app, operator.apiKey);
    client.send({ type: "response.create", input: script(sleeperTurn("never")) });
    const requested = await client.waitFor((f) => f.type === "approval.requested");
    const approvalInfo = requested.approval as { id: string; cwd: string };
    client.send({ type: "approval.decision", responseId: requested.responseId, approvalId: approvalInfo.id, decision: "approve" });
    const pid = await waitForPid(workspaceOf(app, requested.sessionId));
    client.send({ type: "response.cancel", responseId: requested.responseId });
    await client.waitFor((f) => f.type === "response.completed" && f.status === "cancelled", 30_000);
    await waitUntil(() => !processAlive(pid), 30_000, `process ${pid} to be gone`);
    client.close();
  });
});

describe(`the deadline counts the run's execution over all its attempts, never the waits for people (${testDbKind()})`, () => {
  it("long waits for a person do not expire the run; the time the commands ran adds up across resumed attempts", async () => {
    // Each attempt alone (one 1.5 s command) stays well under the 4000 ms budget, with 2.5 s to spare
    // for a loaded machine's overhead over the first two; the four commands' sum (6 s) always exceeds it.
    const BUDGET_MS = 4000;
    const steps = [execTurn("sleep 1.5"), execTurn("sleep 1.5"), execTurn("sleep 1.5"), execTurn("sleep 1.5"), { text: "never said" }];
    const first = await invoke(app, operator.apiKey, runtimeScript(steps, { timeoutMs: BUDGET_MS }));
    expect(first.status).toBe("requires_action");
    // A person takes longer than the whole budget to decide: waiting is not execution. (A sleep is a
    // lower bound on the wait: load only makes it longer, which is what the test claims is harmless.)
    await sleep(BUDGET_MS + 500);
    const second = await ok200(await decide(app, operator.apiKey, first.requiredAction?.id as string, "approve"));
    expect(second.status).toBe("requires_action");
    // Keep approving (after a pause each time): the commands' time adds up until the budget is spent.
    let current = second;
    let approvals = 1;
    while (current.status === "requires_action" && approvals < 4) {
      await sleep(1000);
      current = await ok200(await decide(app, operator.apiKey, current.requiredAction?.id as string, "approve"));
      approvals++;
    }
    expect(current.status).toBe("failed");
    expect(current.error).toMatchObject({ code: "deadline_exceeded" });
    expect(current.outputText ?? "").not.toContain("never said");
    // At least one 1.5 s command ran to completion in an earlier attempt before the budget ran out.
    expect(approvals).toBeGreaterThanOrEqual(2);
    // The failing attempt was a resumed one (at least the third): no single attempt ran out of time alone.
    const attempts = await phasesByAttempt(first.id);
    expect(attempts.length).toBeGreaterThanOrEqual(3);
  });
});
