import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Countersign, CountersignError, type TDecisionBody, type TFrame } from "../../clients/ts/src/index";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { driveScenario, installPythonClient, installTsClient, scratch, type TEvent } from "./client-packages";
import { execTurn, script } from "./helpers";

/**
 * Issue 19 point 3 and issue 30 points 4–5: the TypeScript client end to end from its source
 * (responses over JSON, SSE with resume and WebSocket with resume; approvals; questions), then both
 * clients as packages: packed (`npm pack`, a wheel), installed offline in a scratch directory and
 * run there against a running server, with the decisions made through /v1 by another user.
 */
let app: TTestApp;
let alice: TTestUser;
let operator: TTestUser;
let client: Countersign;
let approver: Countersign;

beforeAll(async () => {
  app = await startTestApp();
  [alice, operator] = await Promise.all([app.user("member", "Alice"), app.user("operator", "Olga Operator")]);
  client = new Countersign({ baseUrl: app.url, apiKey: alice.apiKey });
  approver = new Countersign({ baseUrl: app.url, apiKey: operator.apiKey });
  // Migrations on a fresh database can take long on a busy machine.
}, 180_000);
afterAll(async () => {
  await app?.close();
});

async function collect(frames: AsyncIterable<TFrame>): Promise<TFrame[]> {
  const out: TFrame[] = [];
  for await (const f of frames) out.push(f);
  return out;
}

describe(`TypeScript client (${testDbKind()})`, () => {
  it("responses: create, get, stream (SSE), follow with resume from a sequence", async () => {
    const streamed = await collect(client.responses.stream({ input: script([{ text: "Hello there." }]) }));
    expect(streamed.map((f) => f.type)).toContain("response.text.delta");
    const last = streamed[streamed.length - 1] as Extract<TFrame, { type: "response.completed" }>;
    expect(last).toMatchObject({ type: "response.completed", status: "completed", outputText: "Hello there." });

    const env = await client.responses.create({ input: script([execTurn("echo from-client"), { text: "done" }]) });
    expect(env.status).toBe("requires_action");
    expect((await client.responses.get(env.id, env.sessionId)).status).toBe("requires_action");
    const following = collect(client.responses.follow(env.id, env.sessionId));
    const approvalId = (env.requiredAction as { id: string }).id;
    const decided = await approver.approvals.decide(approvalId, { decision: "approve" });
    expect(decided).toMatchObject({ status: "completed", approvalId });
    const all = await following;
    const sequences = all.map((f) => f.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(all[all.length - 1]).toMatchObject({ type: "response.completed", status: "completed" });
    expect(all.map((f) => f.type)).toContain("approval.resolved");
    // Resume from the middle (Last-Event-ID): exactly the frames after it, none twice.
    const middle = all[Math.floor(all.length / 2)] as TFrame;
    const resumed = await collect(client.responses.follow(env.id, env.sessionId, { after: middle.sequence }));
    expect(resumed.map((f) => f.sequence)).toEqual(sequences.filter((s) => s > middle.sequence));
    // Errors carry the contract's code.
    await expect(client.responses.get("resp_nope", env.sessionId)).rejects.toMatchObject({ status: 404, code: "not_found" });
  });

  it("WebSocket: a dropped socket resumes every followed response from the last sequence seen", async () => {
    const live = await client.live();
    try {
      live.create(script([execTurn("echo over-ws"), { text: "finished" }]), { requestId: "r1" });
      const boundary = (await live.next((f) => f.type === "response.completed" && "status" in f && f.status === "requires_action")) as Extract<TFrame, { type: "response.completed" }>;
      const seenBefore = live.frames.length;
      live.drop();
      const approvalId = (boundary.requiredAction as { id: string }).id;
      await approver.approvals.decide(approvalId, { decision: "approve" });
      await live.resume();
      const done = await live.next((f) => f.type === "response.completed" && "status" in f && f.status === "completed", { from: seenBefore });
      expect(done).toMatchObject({ responseId: boundary.responseId, outputText: expect.stringContaining("finished") });
      const ofRun = live.frames.filter((f): f is TFrame => "sequence" in f && f.responseId === boundary.responseId).map((f) => f.sequence);
      expect(new Set(ofRun).size).toBe(ofRun.length);
      expect(ofRun).toEqual([...ofRun].sort((a, b) => a - b));
      expect(live.frames.some((f) => f.type === "approval.resolved")).toBe(true);
    } finally {
      live.close();
    }
  });

  it("approvals: request, wait, consume once; questions: ask and answer", async () => {
    const created = await client.approvals.request({ action: "exec", arguments: { command: "make deploy" } });
    // The create answers the approval as GET shows it.
    expect(created).toMatchObject({ status: "pending", arguments: { command: "make deploy" }, edited: false, consumed: false });
    const waiting = client.approvals.wait(created.id, { timeoutMs: 10_000 });
    expect((await approver.approvals.list()).map((a) => a.id)).toContain(created.id);
    await approver.approvals.decide(created.id, { decision: "approve" });
    const approved = await waiting;
    expect(approved.status).toBe("approved");
    expect((await client.approvals.consume(created.id, approved.bindingHash)).consumed).toBe(true);
    const replay = await client.approvals.consume(created.id, approved.bindingHash).catch((e: unknown) => e);
    expect(replay).toBeInstanceOf(CountersignError);
    expect(replay).toMatchObject({ status: 409, code: "already_consumed" });

    const asking = client.questions.ask({ questions: [{ questionId: "env", header: "Env", question: "Which environment?", options: [{ label: "staging" }, { label: "prod" }] }] }, { timeoutMs: 20_000 });
    let questionId: string | undefined;
    for (let i = 0; i < 50 && !questionId; i++) {
      questionId = (await approver.questions.list()).find((q) => q.requester.userId === alice.userId)?.id;
      if (!questionId) await new Promise((r) => setTimeout(r, 100));
    }
    expect(questionId).toBeDefined();
    await approver.questions.resolve({ id: questionId as string, answers: { env: ["staging"] } });
    expect(await asking).toEqual({ status: "answered", answers: { env: ["staging"] } });
  });
});

/** How the operator decides each step a scenario asks about (the step names are the scenarios'). */
const REPLY = "Not today: the build directory is in use.";
const DECISIONS: Record<string, TDecisionBody> = {
  edit: { decision: "approve", arguments: { command: "make deploy ENV=staging" } },
  deny: { decision: "deny", message: REPLY },
  retry: { decision: "approve", arguments: { command: "deploy v2" } },
  "retry-refused": { decision: "approve", arguments: { command: "deploy v2" } },
  "async-def": { decision: "approve" },
  "async-plain": { decision: "approve", arguments: { command: "make lint --fix" } },
  "async-deny": { decision: "deny", message: REPLY },
  "async-retry": { decision: "approve", arguments: { command: "deploy v4" } },
  "sync-client-async-def": { decision: "approve" },
  "send-email": { decision: "approve", arguments: { to: "ops@example.com", subject: "Weekly report (checked)" } },
};

/** Decides a scenario's `requested` steps as DECISIONS says and answers its question. */
async function operatorFor(event: TEvent): Promise<void> {
  if (event.event === "requested") {
    expect(event.status, String(event.step)).toBe("pending");
    const decision = DECISIONS[String(event.step)];
    if (!decision) throw new Error(`No decision for step ${String(event.step)}.`);
    await approver.approvals.decide(event.id as string, decision);
  }
  if (event.event === "asking") {
    let questionId: string | undefined;
    for (let i = 0; i < 200 && !questionId; i++) {
      questionId = (await approver.questions.list()).find((q) => q.requester.userId === alice.userId && q.status === "pending")?.id;
      if (!questionId) await new Promise((r) => setTimeout(r, 100));
    }
    await approver.questions.resolve({ id: questionId as string, answers: { answer: ["staging"] } });
  }
}

const scenarioEnv = () => ({ ...process.env, COUNTERSIGN_URL: app.url, COUNTERSIGN_API_KEY: alice.apiKey });

/** A refused edit ran nothing: the approval is approved with the edit, and still unconsumed. */
async function expectUnconsumedEdit(event: TEvent | undefined): Promise<void> {
  expect(event).toMatchObject({ arguments: { command: "deploy v2" }, original: { command: "deploy v1" }, denied: true });
  expect(await client.approvals.get(event?.id as string)).toMatchObject({ status: "approved", edited: true, consumed: false, arguments: { command: "deploy v2" } });
}

describe(`TypeScript package, installed from its npm pack tarball (${testDbKind()})`, () => {
  it("requireApproval runs approved (edited) arguments, a retry runs the edit (or throws with acceptEdits: false), a denial throws its reply", async () => {
    const dir = scratch("ts-client");
    try {
      const { tarball, scenario, project } = await installTsClient(dir.dir);
      expect(tarball).toMatch(/countersign-client-\d+\.\d+\.\d+\.tgz$/);
      const { code, stderr, events } = await driveScenario(process.execPath, [scenario], { cwd: project, env: scenarioEnv() }, operatorFor);
      expect(code, `${stderr}\n${JSON.stringify(events)}`).toBe(0);
      expect(events.module?.file).toContain(`${project}/node_modules/@countersign/client/dist/index.js`);
      expect(events.edit).toEqual({ event: "edit", value: "ran make deploy ENV=staging" });
      expect(events.deny).toEqual({ event: "deny", status: "denied", message: REPLY });
      expect(events.retried).toEqual({ event: "retried", status: "approved", edited: true, arguments: { command: "deploy v2" } });
      expect(events.retry).toEqual({ event: "retry", value: "ran deploy v2" });
      await expectUnconsumedEdit(events["retry-refused"]);
      expect(events.replay).toEqual({ event: "replay", status: 409, code: "already_consumed" });
      expect(events["send-email"]).toEqual({ event: "send-email", value: 'sent "Weekly report (checked)" to ops@example.com' });
      expect(events.done).toEqual({ event: "done", ran: ["make deploy ENV=staging", "deploy v2"] });
    } finally {
      dir.remove();
    }
  }, 300_000);
});

describe(`Python package, installed from its wheel (${testDbKind()})`, () => {
  it("sync and asyncio clients: require_approval on plain and async functions runs approved (edited) arguments, retries run the edit, ApprovalDenied carries the reply", async () => {
    const dir = scratch("py-client");
    try {
      const { python, wheel, scenario } = await installPythonClient(dir.dir);
      expect(wheel).toMatch(/countersign-\d+\.\d+\.\d+-py3-none-any\.whl$/);
      const { code, stderr, events } = await driveScenario(python, [scenario], { cwd: dir.dir, env: scenarioEnv() }, operatorFor);
      expect(code, `${stderr}\n${JSON.stringify(events)}`).toBe(0);
      // The installed package, not the source tree.
      expect(String(events.module?.file)).toMatch(/\/venv\/lib\/python3[.0-9]*\/site-packages\/countersign\/__init__\.py$/);
      expect(String(events.module?.file).startsWith(dir.dir)).toBe(true);
      // The synchronous client.
      expect(events.edit).toEqual({ event: "edit", value: "ran make deploy ENV=staging" });
      expect(events.deny).toEqual({ event: "deny", status: "denied", message: REPLY });
      expect(events.echo).toEqual({ event: "echo", value: "hi" });
      expect(events.replay).toEqual({ event: "replay", status: 409, code: "already_consumed" });
      expect(events.invalid).toMatchObject({ status: 422, code: "validation_failed", detail: expect.stringContaining("command") });
      expect(events.retried).toEqual({ event: "retried", status: "approved", edited: true, arguments: { command: "deploy v2" } });
      expect(events.retry).toEqual({ event: "retry", value: "ran deploy v2" });
      await expectUnconsumedEdit(events["retry-refused"]);
      expect(events["send-email"]).toEqual({ event: "send-email", value: 'sent "Weekly report (checked)" to ops@example.com' });
      expect(events.answer).toEqual({ event: "answer", value: "staging" });
      // The asyncio client, and the synchronous one wrapping an async def.
      expect(events["async-def"]).toEqual({ event: "async-def", value: "async ran make test" });
      expect(events["async-plain"]).toEqual({ event: "async-plain", value: "plain ran make lint --fix" });
      expect(events["async-deny"]).toEqual({ event: "async-deny", status: "denied", message: REPLY });
      expect(events["async-retry"]).toEqual({ event: "async-retry", value: "async ran deploy v4" });
      expect(events["sync-client-async-def"]).toEqual({ event: "sync-client-async-def", value: "ran make docs", coroutine: true });
      expect(events.done).toEqual({ event: "done", ran: ["make deploy ENV=staging", "deploy v2", "make test", "make lint --fix", "deploy v4", "make docs"] });
    } finally {
      dir.remove();
    }
  }, 300_000);
});
