
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import type { TTestApp, TTestUser } from "../../server/testing/test-app";
import type { TFakeModel } from "./fake-openai";
import { startPluginApp, text, toolCall, toolMessages, trajectoryOf as runTrajectory } from "./plugin-model-helpers";
import { type TBody, invoke, ok200, settledResponse } from "./helpers";

/**
 * Issue 17 point 4: the OpenAI Agents SDK wrapped as a plugin (examples/plugins/openai-agents),
 * loaded from its folder through the plugins configuration file and driven through /v1 against a
 * fake OpenAI-compatible endpoint. Its approvals are covered by plugins-native.test.ts; here the two
 * other kinds: a client tool (`page_title`) and a question to the person (`ask_user`).
 */
const AGENTS_SDK = resolve("examples/plugins/openai-agents");
const AGENT = { agent: "openai-agents" };


let app: TTestApp;
let fake: TFakeModel;
let close: () => Promise<void>;
let member: TTestUser;

const gateway = (method: string, key: string, body: unknown) => app.api(`/v1/gateway/${method}`, { key, body });
const settled = (env: TBody) => settledResponse(app, member.apiKey, env);
const trajectoryOf = (id: string) => runTrajectory(app, member.apiKey, id);

beforeAll(async () => {
  ({ app, fake, close } = await startPluginApp([AGENTS_SDK], "fake-agents-sdk"));
  member = await app.user("member");
}, 180_000);
afterAll(async () => {
  await close?.();
});

describe(`the OpenAI Agents SDK wrapped as a plugin: client tools and questions (${testDbKind()})`, () => {
  it("a client tool: the run waits for the client's output on /v1; posted, the SDK tool returns it to the model and the run completes", async () => {
    const from = fake.requests.length;
    // The first attempt's model call, the re-run attempt's (same call), then the final answer.
    fake.reply(toolCall("page_title", {}), toolCall("page_title", {}), text("The page is Countersign."));
    const waiting = await invoke(app, member.apiKey, "What page am I on?", AGENT);
    expect(waiting.status).toBe("requires_action");
    const action = waiting.requiredAction as { type: string; id: string; name: string; arguments: unknown };
    // Policy never: no person is asked, the client is.
    expect(action).toMatchObject({ type: "client_tool", name: "page_title", arguments: {} });
    expect(fake.requests.length - from).toBe(1);
    const done = await ok200(await app.api(`/v1/client-tools/${action.id}`, { key: member.apiKey, body: { output: { title: "Countersign" } } }));
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("The page is Countersign.");
    expect(fake.requests.length - from).toBe(3);
    // The SDK model read the client's output as the call's result.
    expect(toolMessages(fake, from)).toEqual([JSON.stringify({ title: "Countersign" })]);
    // A second post is refused: the request was answered.
    expect((await app.api(`/v1/client-tools/${action.id}`, { key: member.apiKey, body: { output: { title: "other" } } })).status).toBeGreaterThanOrEqual(400);
    const trajectory = await trajectoryOf(done.id as string);
    expect(trajectory.filter((e) => e.type === "client_tool.requested")).toHaveLength(1);
    expect(trajectory.filter((e) => e.type === "approval.requested")).toHaveLength(0);
    expect(trajectory.find((e) => e.type === "harness.tool_surface.finalized")?.data).toMatchObject({ client: ["page_title"] });
    expect(done.output).toEqual(expect.arrayContaining([expect.objectContaining({ type: "tool_result", name: "page_title", output: { title: "Countersign" } })]));
  });

  it("a question: the run waits for the person; answered through question.resolve, the SDK tool returns the answer to the model", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("ask_user", { question: "Which site should I deploy?" }), text("You chose site-q."));
    const waiting = await invoke(app, member.apiKey, "Ask me which site to deploy.", AGENT);
    expect(waiting.status).toBe("requires_action");
    const action = waiting.requiredAction as { type: string; id: string; questions: Array<{ question: string }> };
    expect(action.type).toBe("question");
    expect(action.questions?.[0]?.question).toBe("Which site should I deploy?");
    // Listed with the person's pending questions.
    const pending = await gateway("question.get", member.apiKey, { id: action.id });
    expect(((await pending.json()) as { payload: { question: { status: string } } }).payload.question.status).toBe("pending");
    const answered = await gateway("question.resolve", member.apiKey, { id: action.id, answers: { answer: ["site-q"] } });
    expect(answered.status, await answered.clone().text()).toBe(200);
    const done = await settled(waiting);
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("You chose site-q.");
    // The same attempt went on: one model call before the question, one after.
    expect(fake.requests.length - from).toBe(2);
    expect(toolMessages(fake, from)).toEqual(["The person answered: site-q"]);
    expect(done.output).toEqual(expect.arrayContaining([expect.objectContaining({ type: "tool_result", name: "ask_user", output: "The person answered: site-q" })]));
  });

  it("a question the person declines: the model reads that they declined; a question of a cancelled run ends with the run", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("ask_user", { question: "May I deploy?" }), text("Understood, I will not."));
    const waiting = await invoke(app, member.apiKey, "Ask me before deploying.", AGENT);
    expect(waiting.status).toBe("requires_action");
    const id = (waiting.requiredAction as { id: string }).id;
    expect((await gateway("question.resolve", member.apiKey, { id, cancel: true })).status).toBe(200);
    const done = await settled(waiting);
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("Understood, I will not.");
    expect(toolMessages(fake, from)).toEqual(["The person declined to answer."]);

    const next = fake.requests.length;
    fake.reply(toolCall("ask_user", { question: "Still there?" }));
    const asking = await invoke(app, member.apiKey, "Ask me something.", AGENT);
    expect(asking.status).toBe("requires_action");
    const questionId = (asking.requiredAction as { id: string }).id;
    expect((await app.api(`/v1/responses/${asking.id}/cancel`, { key: member.apiKey, body: {} })).status).toBe(200);
    expect((await settled(asking)).status).toBe("cancelled");
    // Nobody can answer it any more, and the model was not asked again.
    const late = await gateway("question.resolve", member.apiKey, { id: questionId, answers: { answer: ["yes"] } });
    expect(late.status).toBeGreaterThanOrEqual(400);
    expect(fake.requests.length - next).toBe(1);
  });
});
