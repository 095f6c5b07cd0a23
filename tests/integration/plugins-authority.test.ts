import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { createModelReviewer, createReviewerChain, createRuleReviewer } from "../../server/reviewer";
import { fakeModel, type TFakeModel } from "./fake-model";
import { type TBody, expectError, getResponse, invoke, ok200, waitUntil, settledResponse } from "./helpers";

const EXAMPLE = resolve("examples/plugins/native-authority");
const AGENT = { agent: "native-authority" };

type TStep = Record<string, unknown>;

describe(`the host's authority capabilities, through the native-authority plugin (${testDbKind()})`, () => {
  let app: TTestApp;
  let model: TFakeModel;
  let owner: TTestUser;
  let other: TTestUser;
  beforeAll(async () => {
    model = await fakeModel();
    // The installation's reviewer: the rules, then a model (the fake endpoint; its mode picks the verdict).
    app = await startTestApp({ plugins: [{ path: EXAMPLE, enabled: true }], reviewer: createReviewerChain([createRuleReviewer(), createModelReviewer({ baseURL: model.url, model: "m", timeoutMs: 30_000 })]) });
    owner = await app.user("operator");
    other = await app.user("operator");
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    model?.server.close();
  });

  const run = (steps: TStep[], key = owner.apiKey) => invoke(app, key, { steps }, AGENT);
  /** The JSON list of step results a completed run answered with. */
  const results = (env: TBody): Array<Record<string, unknown>> => JSON.parse(env.outputText ?? "[]") as Array<Record<string, unknown>>;
  const settled = (env: TBody) => settledResponse(app, owner.apiKey, env);
  const gateway = (method: string, key: string, body: unknown) => app.api(`/v1/gateway/${method}`, { key, body });
  const trajectoryTypes = async (responseId: string, key = owner.apiKey): Promise<Array<{ type: string; data: Record<string, unknown> }>> => {
    const text = await (await app.api(`/api/export/trajectory?responseId=${responseId}`, { key })).text();
    return text
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; data: Record<string, unknown> });
  };

  it("a source-bound question is answered while its source is current (via /v1), and refused after the source was revoked", async () => {
    const asking = await run([{ ask: "Deploy now?", authority: "source-bound", source: "s-current" }]);
    expect(asking.status).toBe("requires_action");
    expect(asking.requiredAction?.type).toBe("question");
    const questionId = asking.requiredAction?.id as string;
    const answered = await gateway("question.resolve", owner.apiKey, { id: questionId, answers: { q: ["yes"] } });
    expect(answered.status, await answered.clone().text()).toBe(200);
    const done = await settled(asking);
    expect(done.status).toBe("completed");
    expect(results(done)[0]).toEqual({ status: "answered", questionId, answers: { q: ["yes"] } });

    const second = await run([{ ask: "And now?", authority: "source-bound", source: "s-revoked" }]);
    expect(second.requiredAction?.type).toBe("question");
    const secondId = second.requiredAction?.id as string;
    // Another run of the plugin ends that source (its native session went away).
    expect(results(await run([{ endSource: "s-revoked" }]))).toEqual([{ ended: "s-revoked" }]);
    const refused = await gateway("question.resolve", owner.apiKey, { id: secondId, answers: { q: ["yes"] } });
    expect(refused.status).toBe(400);
    const error = ((await refused.json()) as { error: { message: string; details: { reason: string } } }).error;
    expect(error.details.reason).toBe("QUESTION_REQUESTER_INACTIVE");
    expect(error.message).toContain("no longer current");
    // Plain text into the session is refused the same way (409, no new turn).
    const byText = await app.api("/v1/responses", { key: owner.apiKey, body: { input: "yes", sessionId: second.sessionId } });
    expect(byText.status, await byText.clone().text()).toBe(409);
    expect(((await byText.json()) as { detail: string }).detail).toContain("no longer current");
    // The question stays pending (a refused input releases only itself); the run still waits.
    const still = await ok200(await getResponse(app, owner.apiKey, second.id, second.sessionId));
    expect(still.status).toBe("requires_action");
    const question = await gateway("question.get", owner.apiKey, { id: secondId });
    expect(((await question.json()) as { payload: { question: { status: string } } }).payload.question.status).toBe("pending");
    expect((await app.api(`/v1/responses/${second.id}/cancel`, { key: owner.apiKey, body: {} })).status).toBe(200);
  }, 120_000);

  it("an unscoped question is answered; an input dispatched with a lost response is recovered from its receipt, or left unconfirmed and never replayed", async () => {
    const asking = await run([{ ask: "Name?" }]);
    const id = asking.requiredAction?.id as string;
    // Plain text into the session, no agent named: it answers the question the plugin's run waits on
    // (as for a built-in agent's question) and starts no new turn.
    const byText = await invoke(app, owner.apiKey, "Ada", { sessionId: asking.sessionId });
    expect(byText.id).toBe(asking.id);
    expect(results(await settled(asking))[0]).toMatchObject({ status: "answered", questionId: id, answers: { q: ["Ada"] } });

    // A question of the owner's own (a Gateway question): the plugin dispatches an input as its answer.
    const requested = (await (await gateway("question.request", owner.apiKey, { questions: [{ questionId: "q", header: "Color", question: "Color?", isOther: true }] })).json()) as { payload: { id: string } };
    const lostButOurs = results(await run([{ submit: requested.payload.id, answer: "blue", lose: true }]));
    expect(lostButOurs[0]).toMatchObject({ status: "answered", questionId: requested.payload.id });
    // Dispatched again to the now answered question: a definitive refusal.
    expect(results(await run([{ submit: requested.payload.id, answer: "green" }]))[0]).toMatchObject({ status: "rejected", reason: "QUESTION_ALREADY_TERMINAL" });

    // Someone else answered first; the plugin's response is lost: no receipt of its own input, so it stays unconfirmed.
    const another = (await (await gateway("question.request", owner.apiKey, { questions: [{ questionId: "q", header: "Size", question: "Size?", isOther: true }] })).json()) as { payload: { id: string } };
    expect((await gateway("question.resolve", owner.apiKey, { id: another.payload.id, answers: { q: ["L"] } })).status).toBe(200);
    const unconfirmedRun = await run([{ submit: another.payload.id, answer: "L", lose: true }]);
    expect(results(unconfirmedRun)[0]).toMatchObject({ status: "unconfirmed", questionId: another.payload.id });
    const events = await waitUntil(async () => {
      const all = await trajectoryTypes(unconfirmedRun.id);
      return all.some((e) => e.type === "question.input_unconfirmed") ? all : null;
    });
    expect(events.find((e) => e.type === "question.input_unconfirmed")?.data).toMatchObject({ questionId: another.payload.id, replayable: false });
    const answers = ((await (await gateway("question.get", owner.apiKey, { id: another.payload.id })).json()) as { payload: { question: { answers: unknown } } }).payload.question.answers;
    expect(answers).toEqual({ q: ["L"] });
  }, 120_000);

  it("V2 pending input: a harness claims the question its run waits on with a text, or cancels it; a stale assertion is refused and the question stays pending", async () => {
    // The waiting run keeps its capabilities; another run of the plugin (its own channel) claims through them.
    const waiting = await run([{ keep: "v2-a" }, { ask: "Which branch?" }]);
    expect(waiting.requiredAction?.type).toBe("question");
    const questionId = waiting.requiredAction?.id as string;
    const inactive = { status: "rejected", questionId: null, reason: "QUESTION_REQUESTER_INACTIVE", message: expect.stringContaining("no longer current") };
    expect(
      results(
        await run([
          { claim: "v2-a", text: "main", current: false },
          { claim: "v2-a", text: "main", current: false, kind: "source-bound" },
          { cancelInput: "v2-a", resolvedBy: "chat", current: false },
          { claim: "v2-a", text: "main", kind: "ordinary" },
          { claim: "v2-a", text: "main", questionId: "ask_of_nobody" },
        ]),
      ),
    ).toEqual([inactive, inactive, inactive, { error: expect.stringContaining('authorityKind must be "run" or "source-bound"') }, { status: "none" }]);
    const pending = await gateway("question.get", owner.apiKey, { id: questionId });
    expect(((await pending.json()) as { payload: { question: { status: string } } }).payload.question.status).toBe("pending");

    // A current source-bound input answers it as the run's owner, with a receipt; the run resumes with the text.
    const [claimed] = results(await run([{ claim: "v2-a", text: "main", kind: "source-bound" }]));
    expect(claimed).toEqual({ status: "answered", questionId, resolutionId: expect.stringMatching(/^res/) });
    expect(results(await settled(waiting))[1]).toEqual({ status: "answered", questionId, answers: { q: ["main"] } });
    const claimEvents = await waitUntil(async () => {
      const all = await trajectoryTypes(waiting.id);
      return all.some((e) => e.type === "question.input_claimed") ? all : null;
    });
    expect(claimEvents.find((e) => e.type === "question.input_claimed")?.data).toEqual({ questionId, authorityKind: "source-bound", resolutionId: (claimed as { resolutionId: string }).resolutionId });

    // Cancelled, recorded with who resolved it; the harness's ask ends (nobody can answer it any more).
    const second = await run([{ keep: "v2-b" }, { ask: "Proceed?" }]);
    const secondId = second.requiredAction?.id as string;
    expect(results(await run([{ cancelInput: "v2-b", resolvedBy: "the harness's chat channel" }]))).toEqual([{ status: "cancelled", questionId: secondId }]);
    expect(results(await settled(second))[1]).toEqual({ status: "aborted", questionId: secondId });
    const cancelled = await gateway("question.get", owner.apiKey, { id: secondId });
    expect(((await cancelled.json()) as { payload: { question: { status: string } } }).payload.question.status).toBe("cancelled");
    const cancelEvents = await waitUntil(async () => {
      const all = await trajectoryTypes(second.id);
      return all.some((e) => e.type === "question.input_cancelled") ? all : null;
    });
    expect(cancelEvents.find((e) => e.type === "question.input_cancelled")?.data).toEqual({ questionId: secondId, authorityKind: "run", resolvedBy: "the harness's chat channel" });
  }, 120_000);

  it("a schema-backed form question from the plugin: answered with typed values through question.resolve; a text reply (in the session or a V2 claim) and an invalid value are refused and it stays pending", async () => {
    const fields = [
      { name: "name", type: "string", required: true },
      { name: "plan", type: "enum", enum: ["free", "pro"], required: true },
      { name: "seats", type: "integer", minimum: 1 },
    ];
    const asking = await run([{ keep: "form-a" }, { ask: "Who signs up?", form: fields }]);
    expect(asking.requiredAction?.type).toBe("question");
    const id = asking.requiredAction?.id as string;
    const shown = ((await (await gateway("question.get", owner.apiKey, { id })).json()) as { payload: { question: { questions: Array<{ presentation?: string; fields?: unknown[] }> } } }).payload.question;
    expect(shown.questions[0]).toMatchObject({ presentation: "form", fields: [expect.objectContaining({ name: "name" }), expect.objectContaining({ name: "plan", enum: ["free", "pro"] }), expect.objectContaining({ name: "seats" })] });
    const invalid = await gateway("question.resolve", owner.apiKey, { id, answers: { "form.name": ["Ada"], "form.plan": ["gold"] } });
    expect(((await invalid.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe("QUESTION_INVALID_ANSWER");
    const byText = await app.api("/v1/responses", { key: owner.apiKey, body: { input: "Ada, pro", sessionId: asking.sessionId } });
    expect(byText.status).toBe(409);
    expect(((await byText.json()) as { detail: string }).detail).toContain(`/answer/${id}`);
    expect(results(await run([{ claim: "form-a", text: "Ada, pro" }]))[0]).toMatchObject({ status: "rejected", reason: "QUESTION_INVALID_ANSWER", message: expect.stringContaining("answer page") });
    expect((await gateway("question.resolve", owner.apiKey, { id, answers: { "form.name": ["Ada"], "form.plan": ["pro"], "form.seats": ["3"] } })).status).toBe(200);
    expect(results(await settled(asking))[1]).toEqual({ status: "answered", questionId: id, answers: { "form.name": ["Ada"], "form.plan": ["pro"], "form.seats": ["3"] } });
  }, 120_000);

  it("retained source authority outlives the foreground turn, is released idempotently, and ends when the run is cancelled", async () => {
    const holding = await run([{ retain: "w1" }, { retain: "w2" }, { ask: "Keep going?" }]);
    expect(holding.status).toBe("requires_action");
    expect(results(await run([{ check: "w1" }]))).toEqual([{ check: "w1", state: "current", aborted: false }]);
    // Released twice: idempotent, and only that handle ends.
    expect(results(await run([{ release: "w2" }, { check: "w2" }, { check: "w1" }]))).toEqual([
      { released: "w2" },
      { check: "w2", state: "ended", aborted: false, message: expect.stringContaining("released") },
      { check: "w1", state: "current", aborted: false },
    ]);
    expect((await app.api(`/v1/responses/${holding.id}/cancel`, { key: owner.apiKey, body: {} })).status).toBe(200);
    const ended = await waitUntil(async () => {
      const [check] = results(await run([{ check: "w1" }]));
      return check?.state === "ended" ? check : null;
    }, 30_000);
    expect(ended).toMatchObject({ aborted: true, message: expect.stringContaining("revoked") });
    const events = await waitUntil(async () => {
      const all = await trajectoryTypes(holding.id);
      return all.some((e) => e.type === "authority.revoked") ? all : null;
    });
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["authority.retained", "authority.released", "authority.revoked"]));

    // A run that completes keeps its retained source (native work outlives the foreground turn).
    const completed = await run([{ retain: "w3" }]);
    expect(completed.status).toBe("completed");
    expect(results(await run([{ check: "w3" }, { release: "w3" }]))[0]).toEqual({ check: "w3", state: "current", aborted: false });
  }, 120_000);

  it("admits a child run attributed to the verified requester and linked to its parent; refuses an ambiguous identity", async () => {
    const parent = await run([{ spawn: "native-authority", input: { steps: [{ say: "child here" }] } }]);
    expect(parent.status).toBe("completed");
    const [spawned] = results(parent);
    expect(spawned).toMatchObject({ status: "admitted", parentResponseId: parent.id });
    const childId = spawned?.responseId as string;
    const child = await waitUntil(async () => {
      const body = await ok200(await getResponse(app, owner.apiKey, childId, spawned?.sessionId as string));
      return body.status === "completed" ? body : null;
    }, 30_000);
    // The child is the requester's own run, linked to its parent in its envelope and both trajectories.
    expect(child.metadata).toMatchObject({ parentResponseId: parent.id, spawnedBy: "subagent" });
    expect(results(child)).toEqual(["child here"]);
    // Attributed to the requester: a member who is not its owner does not see it.
    const member = await app.user("member");
    expect((await app.api(`/v1/responses/${childId}?sessionId=${spawned?.sessionId}`, { key: member.apiKey })).status).toBe(404);
    const parentEvents = await trajectoryTypes(parent.id);
    expect(parentEvents.find((e) => e.type === "subagent.spawned")?.data).toMatchObject({ childResponseId: childId, requester: owner.userId });
    const childEvents = await trajectoryTypes(childId);
    expect(childEvents.find((e) => e.type === "subagent.parent")?.data).toMatchObject({ parentResponseId: parent.id, requester: owner.userId });

    // Naming anyone but the verified requester is ambiguous: refused, and no child exists.
    const refused = await run([{ spawn: "native-authority", input: { steps: [{ say: "x" }] }, user: other.userId }]);
    expect(results(refused)[0]).toMatchObject({ status: "refused", reason: expect.stringContaining("ambiguous identities are refused") });
    expect((await trajectoryTypes(refused.id)).some((e) => e.type === "subagent.refused")).toBe(true);

    // On a harness open to other profiles: once someone else steered the run, who asks is ambiguous.
    const shared = await invoke(app, owner.apiKey, { steps: [{ ask: "Go?" }, { spawn: "native-authority", input: { steps: [{ say: "x" }] } }] }, { agent: "native-authority-shared" });
    expect(shared.requiredAction?.type).toBe("question");
    expect((await app.api(`/v1/responses/${shared.id}/steer`, { key: other.apiKey, body: { text: "mine too" } })).status).toBe(202);
    expect((await gateway("question.resolve", owner.apiKey, { id: shared.requiredAction?.id, answers: { q: ["go"] } })).status).toBe(200);
    const [, ambiguous] = results(await settled(shared));
    expect(ambiguous).toMatchObject({ status: "refused", reason: expect.stringContaining("More than one person is in this run") });

  }, 120_000);

  it("supportsCrossProfileSteering: false refuses another profile's steering and answers (403); the owner's go through", async () => {
    const asking = await run([{ ask: "Whose call?" }]);
    const questionId = asking.requiredAction?.id as string;
    const steer = await app.api(`/v1/responses/${asking.id}/steer`, { key: other.apiKey, body: { text: "do it my way" } });
    expect((await expectError(steer, 403, "forbidden")).detail).toContain("does not accept steering from another profile");
    const answer = await gateway("question.resolve", other.apiKey, { id: questionId, answers: { q: ["mine"] } });
    expect(answer.status).toBe(403);
    expect(((await answer.json()) as { error: { message: string } }).error.message).toContain("does not accept answers from another profile");
    expect((await app.api(`/v1/responses/${asking.id}/steer`, { key: owner.apiKey, body: { text: "owner's note" } })).status).toBe(202);
    expect((await gateway("question.resolve", owner.apiKey, { id: questionId, answers: { q: ["ours"] } })).status).toBe(200);
    expect(results(await settled(asking))[0]).toMatchObject({ status: "answered", answers: { q: ["ours"] } });
  }, 120_000);

  it("records a compaction in the trajectory, and cleans async work resources (before the result when asked, after it otherwise)", async () => {
    const env = await run([{ compact: "The user wants a report." }, { asyncWork: true }]);
    expect(env.status).toBe("completed");
    const [compacted, work] = results(env);
    expect(compacted).toEqual({ summary: "The user wants a report.", tokensBefore: 1200, tokensAfter: 200 });
    // The scratch file was released before the result; the watcher never withheld it.
    expect((work as { order: string[] }).order.slice(0, 3)).toEqual(["work", "scratch-file", "result"]);
    expect((work as { result: string }).result).toBe("work done");
    const events = await waitUntil(async () => {
      const all = await trajectoryTypes(env.id);
      return all.filter((e) => e.type === "async_work.released").length === 2 ? all : null;
    });
    expect(events.find((e) => e.type === "compaction.completed")?.data).toMatchObject({ compaction: 1, summaryChars: 24, tokensBefore: 1200, tokensAfter: 200 });
    // (Recorded as they happen; the order of the two records is not the order of the cleanups, which `order` shows.)
    expect(events.filter((e) => e.type === "async_work.released").map((e) => e.data.why).sort()).toEqual(["after-result", "before-result"]);
  }, 120_000);

  it("reviewExec: the configured exec reviewer's allow-once, deny (with guidance), ask and the failures that become ask, each recorded as a review.verdict", async () => {
    const review = async (command: string, mode: TFakeModel["mode"]) => {
      model.mode = mode;
      const env = await run([{ review: command, reason: "the user asked for it" }]);
      expect(env.status).toBe("completed");
      const verdict = results(env)[0] as Record<string, unknown>;
      const recorded = (await trajectoryTypes(env.id as string)).filter((e) => e.type === "review.verdict").map((e) => e.data);
      expect(recorded).toEqual([expect.objectContaining({ toolName: "exec", decision: verdict.decision, rationale: verdict.rationale })]);
      return verdict;
    };
    // A command the rules leave to the model: its verdict.
    expect(await review("curl -s https://example.com/health", "allow-low")).toMatchObject({ decision: "allow-once", risk: "low", rationale: "Reads a file in the workspace." });
    // The rules deny before the model is asked; a deny carries the rejection guidance.
    const before = model.requests;
    const denied = await review("rm -rf / --no-preserve-root", "allow-low");
    expect(denied).toMatchObject({ decision: "deny", risk: "high" });
    expect(String(denied.guidance)).toContain("Do not pursue the same outcome through workarounds");
    expect(model.requests).toBe(before);
    expect(await review("npm install left-pad", "ask")).toMatchObject({ decision: "ask", risk: "medium" });
    // A high-risk allow, a provider failure and an invalid answer are each `ask`.
    for (const mode of ["allow-high", "500", "garbage"] as const) expect((await review("npm install left-pad", mode)).decision).toBe("ask");
  }, 120_000);

  it("reportOutputTokens from a driver harness: a live response.usage frame per counted report and the envelope's total; a count that is not a positive integer changes nothing", async () => {
    const env = await run([{ tokens: 5 }, { tokens: 0 }, { tokens: 2.5 }, { tokens: 3 }]);
    expect(env.status).toBe("completed");
    expect(results(env)).toEqual([true, false, false, true]);
    expect(env.usage).toMatchObject({ outputTokens: 8 });
    const usage = (await trajectoryTypes(env.id)).filter((e) => e.type === "response.usage").map((e) => e.data);
    expect(usage).toEqual([
      { outputTokens: 5, totalOutputTokens: 5 },
      { outputTokens: 3, totalOutputTokens: 8 },
    ]);
  }, 120_000);

  it("every authority capability called after its attempt settled fails closed with a sentence", async () => {
    expect((await run([{ keep: "old" }])).status).toBe("completed");
    const [late] = results(await run([{ late: "old" }]));
    const closed = "This attempt has settled; its host capabilities are closed.";
    expect(late).toEqual({
      late: "old",
      outcomes: { retainSourceAuthority: closed, ask: closed, spawn: closed, compact: closed, runWithAsyncWorkResources: closed, reviewExec: closed, claimPendingUserInputAnswer: closed },
    });
  }, 120_000);
});
