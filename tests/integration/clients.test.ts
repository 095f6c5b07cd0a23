import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Countersign, CountersignError, type TFrame } from "../../clients/ts/src/index";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { execTurn, script } from "./helpers";

/**
 * Issue 19 point 3: the TypeScript client end to end (responses over JSON, SSE with resume and
 * WebSocket with resume; approvals; questions), and the Python client run as a child process,
 * each against a running server, with the decisions made through /v1 by another user.
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

describe(`Python client (${testDbKind()})`, () => {
  it("require_approval runs only approved (edited) arguments, raises ApprovalDenied with the reply; ask returns the answer", async () => {
    const child = spawn("python3", ["clients/python/test_countersign.py"], { env: { ...process.env, COUNTERSIGN_URL: app.url, COUNTERSIGN_API_KEY: alice.apiKey }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += String(d)));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    const events: Array<Record<string, unknown>> = [];
    let requested = 0;
    for await (const line of createInterface({ input: child.stdout })) {
      const event = JSON.parse(line) as Record<string, unknown>;
      events.push(event);
      if (event.event === "requested") {
        requested += 1;
        expect(event.status).toBe("pending");
        const id = event.id as string;
        if (requested === 1) await approver.approvals.decide(id, { decision: "approve", arguments: { command: "make deploy ENV=staging" } });
        else await approver.approvals.decide(id, { decision: "deny", message: "Not today: the build directory is in use." });
      }
      if (event.event === "asking") {
        let questionId: string | undefined;
        for (let i = 0; i < 100 && !questionId; i++) {
          questionId = (await approver.questions.list()).find((q) => q.requester.userId === alice.userId)?.id;
          if (!questionId) await new Promise((r) => setTimeout(r, 100));
        }
        await approver.questions.resolve({ id: questionId as string, answers: { answer: ["staging"] } });
      }
    }
    const code = await exited;
    expect(code, stderr).toBe(0);
    const byName = Object.fromEntries(events.map((e) => [e.event, e]));
    expect(byName.result).toEqual({ event: "result", value: "ran make deploy ENV=staging" });
    expect(byName.denied).toEqual({ event: "denied", status: "denied", message: "Not today: the build directory is in use." });
    expect(byName.echo).toEqual({ event: "echo", value: "hi" });
    expect(byName.replay).toEqual({ event: "replay", status: 409, code: "already_consumed" });
    expect(byName["unknown-action"]).toMatchObject({ status: 422, code: "validation_failed", detail: expect.stringContaining("launch_missiles") });
    expect(byName.answer).toEqual({ event: "answer", value: "staging" });
    expect(byName.done).toEqual({ event: "done", ran: ["make deploy ENV=staging"] });
  });
});
