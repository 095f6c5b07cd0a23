import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { Annotation, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { Agent, OpenAIChatCompletionsModel, Runner, tool as agentTool } from "@openai/agents";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { Countersign, type TDecisionBody } from "../../clients/ts/src/index";
import { testDbKind } from "../../db/testing";
import { withCountersign } from "../../examples/adapters/ai-sdk";
import { countersignInterrupt, invokeWithCountersign } from "../../examples/adapters/langgraph";
import { runWithCountersign } from "../../examples/adapters/openai-agents";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { startFakeModel, type TFakeModel, type TFakeRequest } from "./fake-openai";

/**
 * Issue 19 point 5: the adapters of examples/adapters run end to end against a running server.
 * Each SDK's tool asks for an approval; another user (an operator) decides it through /v1:
 * approve, deny with a reply, approve with edited arguments. The tool runs only approved
 * arguments, and an approval that ran was consumed exactly once (a replay is a 409).
 */
let app: TTestApp;
let alice: TTestUser;
let client: Countersign;
let approver: Countersign;
let fake: TFakeModel;

beforeAll(async () => {
  app = await startTestApp();
  const [a, operator] = await Promise.all([app.user("member", "Alice"), app.user("operator", "Olga Operator")]);
  alice = a;
  client = new Countersign({ baseUrl: app.url, apiKey: alice.apiKey });
  approver = new Countersign({ baseUrl: app.url, apiKey: operator.apiKey });
  fake = await startFakeModel();
}, 180_000);
afterAll(async () => {
  await fake?.close();
  await app?.close();
});

/** The operator finds Alice's pending approval of `command` and decides it through /v1; answers its id. */
async function decideWhenAsked(command: string, body: TDecisionBody): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const found = (await approver.approvals.list("pending")).find((a) => (a.arguments as { command?: string }).command === command);
    if (found) {
      await approver.approvals.decide(found.id, body);
      return found.id;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`No approval of ${command} was requested.`);
}

/** It ran once: consumed, and consuming it again is refused. */
async function expectConsumedOnce(id: string): Promise<void> {
  const approval = await client.approvals.get(id);
  expect(approval).toMatchObject({ status: "approved", consumed: true });
  await expect(client.approvals.consume(id, approval.bindingHash)).rejects.toMatchObject({ status: 409, code: "already_consumed" });
}

/** It did not run: never consumed, and it cannot be consumed now. */
async function expectNotConsumable(id: string, status: string): Promise<void> {
  const approval = await client.approvals.get(id);
  expect(approval).toMatchObject({ status, consumed: false });
  if (status !== "approved") await expect(client.approvals.consume(id, approval.bindingHash)).rejects.toMatchObject({ status: 409 });
}

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };

/** A mock model that calls `run_command` with `command` once, then says what the tool answered. */
function mockModel(command: string) {
  let calls = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      calls++;
      if (calls === 1) {
        return { content: [{ type: "tool-call" as const, toolCallId: `call_${randomUUID()}`, toolName: "run_command", input: JSON.stringify({ command }) }], finishReason: { unified: "tool-calls" as const, raw: undefined }, usage, warnings: [] };
      }
      return { content: [{ type: "text" as const, text: "done" }], finishReason: { unified: "stop" as const, raw: undefined }, usage, warnings: [] };
    },
  });
}

describe(`Vercel AI SDK tool wrapped with Countersign (${testDbKind()})`, () => {
  const ran: string[] = [];
  /** `run_command` wrapped with Countersign (`client` is assigned in beforeAll, so wrap per test). */
  const wrapped = (needsApproval: boolean | ((input: { command: string }) => boolean) = true) =>
    withCountersign(
      tool({
        description: "Run a shell command",
        inputSchema: z.object({ command: z.string() }),
        needsApproval,
        execute: async ({ command }) => {
          ran.push(command);
          return { ran: command };
        },
      }),
      { client, action: "exec", timeoutMs: 30_000 },
    );

  it("approve: the tool runs once, after the approval is consumed", async () => {
    const command = `deploy ai-${randomUUID()}`;
    const generating = generateText({ model: mockModel(command), tools: { run_command: wrapped() }, stopWhen: stepCountIs(3), prompt: "Deploy" });
    const id = await decideWhenAsked(command, { decision: "approve" });
    const result = await generating;
    expect(ran.filter((c) => c === command)).toHaveLength(1);
    expect(result.steps[0]?.toolResults[0]).toMatchObject({ toolName: "run_command", output: { ran: command } });
    expect(result.text).toBe("done");
    await expectConsumedOnce(id);
  });

  it("deny with a reply: the tool does not run; its result is the reply", async () => {
    const command = `deploy ai-${randomUUID()}`;
    const generating = generateText({ model: mockModel(command), tools: { run_command: wrapped() }, stopWhen: stepCountIs(3), prompt: "Deploy" });
    const id = await decideWhenAsked(command, { decision: "deny", message: "Not on a Friday." });
    const result = await generating;
    expect(ran).not.toContain(command);
    expect(result.steps[0]?.toolResults[0]).toMatchObject({ output: { denied: true, message: "Not on a Friday." } });
    await expectNotConsumable(id, "denied");
  });

  it("edit: the tool runs the approver's arguments, not the model's", async () => {
    const command = `deploy ai-${randomUUID()}`;
    const edited = `${command} --dry-run`;
    const generating = generateText({ model: mockModel(command), tools: { run_command: wrapped() }, stopWhen: stepCountIs(3), prompt: "Deploy" });
    const id = await decideWhenAsked(command, { decision: "approve", arguments: { command: edited } });
    const result = await generating;
    expect(ran).not.toContain(command);
    expect(ran.filter((c) => c === edited)).toHaveLength(1);
    expect(result.steps[0]?.toolResults[0]).toMatchObject({ output: { ran: edited } });
    await expectConsumedOnce(id);
  });

  it("a needsApproval function that says no: the tool runs without asking Countersign", async () => {
    const command = `status ai-${randomUUID()}`;
    const before = (await approver.approvals.list("decided")).length + (await approver.approvals.list("pending")).length;
    const result = await generateText({ model: mockModel(command), tools: { run_command: wrapped(({ command: c }) => c.startsWith("deploy")) }, stopWhen: stepCountIs(3), prompt: "Status" });
    expect(ran.filter((c) => c === command)).toHaveLength(1);
    expect(result.steps[0]?.toolResults[0]).toMatchObject({ output: { ran: command } });
    const after = [...(await approver.approvals.list("decided")), ...(await approver.approvals.list("pending"))];
    expect(after).toHaveLength(before);
    expect(after.some((a) => (a.arguments as { command?: string }).command === command)).toBe(false);
  });
});

/** A non-streamed chat completion from the fake endpoint. */
const completion =
  (message: Record<string, unknown>, finish: "stop" | "tool_calls") =>
  async (res: ServerResponse, _req: TFakeRequest): Promise<void> => {
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion", created: 1, model: "fake", choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
    );
  };
const toolCallCompletion = (command: string) =>
  completion({ role: "assistant", content: null, tool_calls: [{ id: `call_${randomUUID()}`, type: "function", function: { name: "run_command", arguments: JSON.stringify({ command }) } }] }, "tool_calls");
const textCompletion = (text: string) => completion({ role: "assistant", content: text }, "stop");

describe(`OpenAI Agents SDK interruptions decided in Countersign (${testDbKind()})`, () => {
  const ran: string[] = [];
  const agent = () =>
    new Agent({
      name: "deployer",
      instructions: "Deploy what you are asked to.",
      model: new OpenAIChatCompletionsModel(new OpenAI({ baseURL: fake.url, apiKey: "test-key" }), "fake"),
      tools: [
        agentTool({
          name: "run_command",
          description: "Run a shell command",
          parameters: z.object({ command: z.string() }),
          needsApproval: true,
          execute: async ({ command }) => {
            ran.push(command);
            return `ran ${command}`;
          },
        }),
      ],
    });
  const runner = () => new Runner({ tracingDisabled: true });
  /** The tool message the model received after the interruption was answered. */
  const toolMessageAfter = (from: number) => fake.requests.slice(from).flatMap((r) => r.body.messages).find((m) => m.role === "tool");

  it("approve: state.approve after the approval is consumed; the tool runs once", async () => {
    const command = `deploy agents-${randomUUID()}`;
    const from = fake.requests.length;
    fake.reply(toolCallCompletion(command), textCompletion("deployed"));
    const running = runWithCountersign(agent(), "Deploy", { client, action: () => "exec", runner: runner(), timeoutMs: 30_000 });
    const id = await decideWhenAsked(command, { decision: "approve" });
    const result = await running;
    expect(result.finalOutput).toBe("deployed");
    expect(ran.filter((c) => c === command)).toHaveLength(1);
    expect(String(toolMessageAfter(from)?.content)).toContain(`ran ${command}`);
    await expectConsumedOnce(id);
  });

  it("deny with a reply: state.reject with the reply; the model reads it and the tool does not run", async () => {
    const command = `deploy agents-${randomUUID()}`;
    const from = fake.requests.length;
    fake.reply(toolCallCompletion(command), textCompletion("I will not deploy."));
    const running = runWithCountersign(agent(), "Deploy", { client, action: () => "exec", runner: runner(), timeoutMs: 30_000 });
    const id = await decideWhenAsked(command, { decision: "deny", message: "Freeze until Monday." });
    const result = await running;
    expect(result.finalOutput).toBe("I will not deploy.");
    expect(ran).not.toContain(command);
    expect(String(toolMessageAfter(from)?.content)).toContain("Freeze until Monday.");
    await expectNotConsumable(id, "denied");
  });

  it("edit: the SDK cannot run edited arguments, so the call is rejected naming them and nothing is consumed", async () => {
    const command = `deploy agents-${randomUUID()}`;
    const edited = `${command} --dry-run`;
    const from = fake.requests.length;
    fake.reply(toolCallCompletion(command), textCompletion("ok"));
    const running = runWithCountersign(agent(), "Deploy", { client, action: () => "exec", runner: runner(), timeoutMs: 30_000 });
    const id = await decideWhenAsked(command, { decision: "approve", arguments: { command: edited } });
    await running;
    expect(ran).not.toContain(command);
    expect(ran).not.toContain(edited);
    expect(String(toolMessageAfter(from)?.content)).toContain(edited);
    await expectNotConsumable(id, "approved");
  });
});

describe(`LangGraph JS interrupt answered from Countersign (${testDbKind()})`, () => {
  const ran: string[] = [];
  const State = Annotation.Root({
    command: Annotation<string>(),
    outcome: Annotation<string>(),
  });
  const graph = () =>
    new StateGraph(State)
      .addNode("deploy", async (state) => {
        const decision = await countersignInterrupt(client, { action: "exec", arguments: { command: state.command } });
        if (!decision.approved) return { outcome: `denied: ${decision.message}` };
        const command = String(decision.arguments.command);
        ran.push(command);
        return { outcome: `ran ${command}` };
      })
      .addEdge(START, "deploy")
      .addEdge("deploy", END)
      .compile({ checkpointer: new MemorySaver() });

  it("approve: the graph pauses at interrupt, resumes with Command; the node consumes and runs once", async () => {
    const command = `deploy graph-${randomUUID()}`;
    const g = graph();
    const config = { configurable: { thread_id: randomUUID() } };
    const invoking = invokeWithCountersign<{ outcome: string }>(g, { command }, config, { client, timeoutMs: 30_000 });
    const id = await decideWhenAsked(command, { decision: "approve" });
    expect((await invoking).outcome).toBe(`ran ${command}`);
    expect(ran.filter((c) => c === command)).toHaveLength(1);
    expect((await g.getState(config)).next).toEqual([]);
    await expectConsumedOnce(id);
  });

  it("deny with a reply: the node gets the reply and runs nothing", async () => {
    const command = `deploy graph-${randomUUID()}`;
    const invoking = invokeWithCountersign<{ outcome: string }>(graph(), { command }, { configurable: { thread_id: randomUUID() } }, { client, timeoutMs: 30_000 });
    const id = await decideWhenAsked(command, { decision: "deny", message: "Use the staging target." });
    expect((await invoking).outcome).toBe("denied: Use the staging target.");
    expect(ran).not.toContain(command);
    await expectNotConsumable(id, "denied");
  });

  it("edit: the node runs the approver's arguments", async () => {
    const command = `deploy graph-${randomUUID()}`;
    const edited = `${command} --target staging`;
    const invoking = invokeWithCountersign<{ outcome: string }>(graph(), { command }, { configurable: { thread_id: randomUUID() } }, { client, timeoutMs: 30_000 });
    const id = await decideWhenAsked(command, { decision: "approve", arguments: { command: edited } });
    expect((await invoking).outcome).toBe(`ran ${edited}`);
    expect(ran).toEqual(expect.not.arrayContaining([command]));
    expect(ran.filter((c) => c === edited)).toHaveLength(1);
    await expectConsumedOnce(id);
  });
});
