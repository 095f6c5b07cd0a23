import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import pino from "pino";
import { HOST_TOOL_CATALOG } from "../../server/agents/catalog";
import { AgentRegistry } from "../../server/agents/registry";
import { createToolResultMiddlewareRegistry } from "../../server/core/runtime";
import { createRuleReviewer } from "../../server/reviewer";
import { HarnessRegistry } from "../../server/harnesses/registry";
import { loadPlugins, } from "../../server/plugins/loader";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import type { TFakeModel, TFakeRequest } from "./fake-openai";
import { startPluginApp, text, toolCall, toolMessages, trajectoryOf as runTrajectory } from "./plugin-model-helpers";
import { decide, invoke, lineCount, ok200, workspaceOf } from "./helpers";

/**
 * Issue 17 points 3 and 4: native-loop plugins (plugin API 1.1) loaded from their folders through
 * the plugins configuration file, driven through /v1. The plugins run their own model calls (to the
 * fake OpenAI-compatible endpoint) and their own tools, and ask the host before each tool call.
 */
const NATIVE = resolve("examples/plugins/native-loop");
const AGENTS_SDK = resolve("examples/plugins/openai-agents");
const scratch = mkdtempSync(join(tmpdir(), "countersign-plugins-native-"));


let app: TTestApp;
let fake: TFakeModel;
let close: () => Promise<void>;
let member: TTestUser;
let approver: TTestUser;

const trajectoryOf = (id: string) => runTrajectory(app, member.apiKey, id);

beforeAll(async () => {
  ({ app, fake, close } = await startPluginApp([NATIVE, AGENTS_SDK], "fake-native"));
  member = await app.user("member");
  approver = await app.user("operator");
}, 180_000);
afterAll(async () => {
  await close?.();
  rmSync(scratch, { recursive: true, force: true });
});

describe(`a native-loop plugin asks the host before each of its own tool calls (${testDbKind()})`, () => {
  it("a call needing approval suspends the run; approved, the attempt runs again, the identical call is not asked twice, and the tool runs once", async () => {
    const from = fake.requests.length;
    // The first attempt's model call, then the re-run attempt's (same call), then the final answer.
    fake.reply(toolCall("append_note", { text: "first" }), toolCall("append_note", { text: "first" }), text("noted"));
    const waiting = await invoke(app, member.apiKey, "Note 'first'.", { agent: "native-loop" });
    expect(waiting.status).toBe("requires_action");
    const action = waiting.requiredAction as { type: string; id: string; action: string; arguments: unknown; cwd: string | null };
    expect(action).toMatchObject({ type: "human_approval", action: "native:append_note", arguments: { text: "first" }, cwd: null });
    const workspace = workspaceOf(app, waiting.sessionId as string);
    expect(lineCount(workspace, "notes.txt")).toBe(0);
    const done = await ok200(await decide(app, approver.apiKey, action.id, "approve"));
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("noted");
    expect(lineCount(workspace, "notes.txt")).toBe(1);
    expect(fake.requests.length - from).toBe(3);
    // The plugin's tool-result middleware (plugin API 1.2) rewrote the result before the model saw it.
    expect(toolMessages(fake, from)).toEqual([JSON.stringify({ appended: "first", lines: 1, checkedBy: "native-loop" })]);
    // Each decision is in the trajectory; only one person's decision was asked for.
    const trajectory = await trajectoryOf(done.id as string);
    expect(trajectory.filter((e) => e.type === "approval.requested")).toHaveLength(1);
    expect(trajectory.filter((e) => e.type === "native_tool.decision")).toEqual([expect.objectContaining({ data: expect.objectContaining({ toolName: "append_note", allow: true }) })]);
    // The call and its recorded result are output items of the response.
    expect(done.output).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "tool_call", name: "append_note", arguments: { text: "first" } }),
        expect.objectContaining({ type: "tool_result", name: "append_note", output: { appended: "first", lines: 1, checkedBy: "native-loop" } }),
      ]),
    );
  });

  it("denied with a reply: the tool does not run and the model reads the reply", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("append_note", { text: "second" }), toolCall("append_note", { text: "second" }), text("I will not note it."));
    const waiting = await invoke(app, member.apiKey, "Note 'second'.", { agent: "native-loop" });
    expect(waiting.status).toBe("requires_action");
    const id = (waiting.requiredAction as { id: string }).id;
    const done = await ok200(await app.api(`/v1/approvals/${id}`, { key: approver.apiKey, body: { decision: "deny", message: "Not today." } }));
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("I will not note it.");
    expect(lineCount(workspaceOf(app, waiting.sessionId as string), "notes.txt")).toBe(0);
    const messages = toolMessages(fake, from);
    expect(messages).toHaveLength(1);
    expect(JSON.parse(messages[0] as string)).toEqual({ refused: "denied", message: "Not today." });
  });

  it("a native operation's own cwd outside the session workspace is refused with the reason, never run and never asked", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("read_notes", { cwd: "/etc" }), toolCall("append_note", { text: "escape", cwd: "../.." }), text("Both were refused."));
    const done = await invoke(app, member.apiKey, "Read the notes in /etc.", { agent: "native-loop" });
    expect(done.status).toBe("completed");
    const messages = toolMessages(fake, from).map((m) => JSON.parse(m) as { refused: string; message: string });
    expect(messages).toEqual([
      { refused: "cwd_refused", message: 'The working directory "/etc" is outside the session workspace; commands run only inside it. The tool read_notes was not run.' },
      { refused: "cwd_refused", message: 'The working directory "../.." is outside the session workspace; commands run only inside it. The tool append_note was not run.' },
    ]);
    const trajectory = await trajectoryOf(done.id as string);
    expect(trajectory.filter((e) => e.type === "approval.requested")).toHaveLength(0);
    expect(trajectory.filter((e) => e.type === "native_tool.decision").map((e) => e.data.reason)).toEqual(["cwd_refused", "cwd_refused"]);
  });

  it("a cwd inside the workspace is normalized by the host and the tool runs there", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("read_notes", { cwd: "./" }), text("read"));
    const done = await invoke(app, member.apiKey, "Read the notes.", { agent: "native-loop" });
    expect(done.status).toBe("completed");
    expect(toolMessages(fake, from)).toEqual([JSON.stringify({ notes: "", checkedBy: "native-loop" })]);
    const decision = (await trajectoryOf(done.id as string)).find((e) => e.type === "native_tool.decision");
    expect(decision?.data).toMatchObject({ toolName: "read_notes", allow: true, cwd: "." });
  });

  it("reportOutputTokens once per model response: a response.usage frame each, the envelope's total, nothing for a refused count", async () => {
    // Two model responses of 2 output tokens each (the fake's usage); the loop reports each one live.
    fake.reply(toolCall("read_notes", {}), text("read"));
    const done = await invoke(app, member.apiKey, "Read the notes.", { agent: "native-loop" });
    expect(done.status).toBe("completed");
    expect((done.usage as { outputTokens: number }).outputTokens).toBe(4);
    const usage = (await trajectoryOf(done.id as string)).filter((e) => e.type === "response.usage").map((e) => e.data);
    expect(usage).toEqual([
      { outputTokens: 2, totalOutputTokens: 2 },
      { outputTokens: 2, totalOutputTokens: 4 },
    ]);
    // The same envelope when read again (the total is stored, not only sent live).
    const again = await ok200(await app.api(`/v1/responses/${done.id}?sessionId=${done.sessionId}`, { key: member.apiKey }));
    expect(again.usage).toMatchObject({ outputTokens: 4 });
  });

  it("prepareReplyMedia from the loop: an artifact it made and the workspace files it named reach the answer as attachments and notices", async () => {
    fake.reply(text("Here is the summary."));
    const done = await invoke(app, member.apiKey, { text: "Summarize.", reply: { files: ["missing.txt", "../outside.txt"], artifact: { fileName: "summary.txt", text: "All done." } } }, { agent: "native-loop" });
    expect(done.status).toBe("completed");
    const output = done.output as Array<Record<string, unknown>>;
    expect(output.map((item) => item.type)).toEqual(["message", "attachment", "attachment_failure", "attachment_failure"]);
    expect(output.filter((item) => item.type === "attachment_failure").map((item) => [item.path, item.reason])).toEqual([
      ["missing.txt", "missing"],
      ["../outside.txt", "outside_workspace"],
    ]);
    const attachment = output.find((item) => item.type === "attachment") as { id: string; name: string; url: string; size: number };
    expect(attachment).toMatchObject({ name: "summary.txt", size: 9, url: `/v1/responses/${done.id}/attachments/${attachment.id}` });
    const download = await app.api(attachment.url, { key: member.apiKey });
    expect(download.status).toBe(200);
    expect(await download.text()).toBe("All done.");
    const trajectory = await trajectoryOf(done.id as string);
    expect(trajectory.filter((e) => e.type === "attachment.published").map((e) => e.data.name)).toEqual(["summary.txt"]);
    expect(trajectory.filter((e) => e.type === "attachment.failed").map((e) => e.data.reason)).toEqual(["missing", "outside_workspace"]);

    // Media this attempt did not prepare (here the id just delivered, by another run) is never delivered: the result is refused.
    fake.reply(text("Here it is again."));
    const forged = await invoke(app, member.apiKey, { text: "Again.", reply: { forge: attachment.id } }, { agent: "native-loop" });
    expect(forged.status).toBe("failed");
    expect(JSON.stringify(forged.error)).toContain("did not prepare");
    expect((forged.output as unknown[]).length).toBe(0);
  });

  it("toolExecutionAllow: [] refuses execution while every schema stays visible to the model; onPrepared saw the surface", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("read_notes", {}), text("I could not read them."));
    const done = await invoke(app, member.apiKey, { text: "Read the notes.", toolExecutionAllow: [] }, { agent: "native-loop" });
    expect(done.status).toBe("completed");
    const first = fake.requests[from] as TFakeRequest;
    expect(first.body.tools?.map((t) => t.function.name)).toEqual(["append_note", "read_notes", "page_title"]);
    expect(toolMessages(fake, from).map((m) => JSON.parse(m))).toEqual([
      { refused: "not_executable", message: "The tool read_notes may not run in this attempt (toolExecutionAllow); it was not run." },
    ]);
    const trajectory = await trajectoryOf(done.id as string);
    expect(trajectory.find((e) => e.type === "harness.native_loop.prepared")?.data).toMatchObject({ tools: ["append_note", "read_notes", "page_title"], executable: [] });
    expect(trajectory.find((e) => e.type === "harness.tool_surface.finalized")?.data).toMatchObject({ executable: [] });
    expect(trajectory.filter((e) => e.type === "native_tool.decision").map((e) => e.data.reason)).toEqual(["not_executable"]);
  });

  it("an allow list naming one tool lets only that one run", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("read_notes", {}), toolCall("append_note", { text: "x" }), text("done"));
    const done = await invoke(app, member.apiKey, { text: "Read, then note.", toolExecutionAllow: ["read_notes"] }, { agent: "native-loop" });
    expect(done.status).toBe("completed");
    expect(toolMessages(fake, from).map((m) => JSON.parse(m))).toEqual([{ notes: "", checkedBy: "native-loop" }, { refused: "not_executable", message: expect.stringContaining("append_note may not run") }]);
  });

  it("capabilities called after their attempt settled fail closed with a sentence", async () => {
    const from = fake.requests.length;
    const done = await invoke(app, member.apiKey, { text: "probe", probeSettled: true }, { agent: "native-loop" });
    expect(done.status).toBe("completed");
    const lines = String(done.outputText).split("\n");
    expect(lines).toEqual([
      "runBeforeToolCall: runBeforeToolCall: this attempt has settled; its host capabilities are closed.",
      "finalizeAgentToolAvailability: finalizeAgentToolAvailability: this attempt has settled; its host capabilities are closed.",
      "recordEvent: This attempt has settled; its host capabilities are closed.",
    ]);
    // Nothing was asked of the model, and nothing was decided for the stale call.
    expect(fake.requests.length).toBe(from);
  });
});

describe(`the OpenAI Agents SDK wrapped as a plugin: its approvals are Countersign approvals (${testDbKind()})`, () => {
  it("approve: the SDK's interrupted call becomes an approval; after it the SDK runs the tool once and completes", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("deploy", { target: "site-a" }), toolCall("deploy", { target: "site-a" }), text("deployed site-a"));
    const waiting = await invoke(app, member.apiKey, "Deploy site-a.", { agent: "openai-agents" });
    expect(waiting.status).toBe("requires_action");
    const action = waiting.requiredAction as { type: string; id: string; action: string; arguments: unknown };
    expect(action).toMatchObject({ type: "human_approval", action: "native:deploy", arguments: { target: "site-a" } });
    // Listed with the usual approvals.
    const listed = await ok200(await app.api("/v1/approvals?status=pending", { key: approver.apiKey }));
    expect(JSON.stringify(listed)).toContain(action.id);
    const done = await ok200(await decide(app, approver.apiKey, action.id, "approve"));
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("deployed site-a");
    expect(toolMessages(fake, from)).toEqual(["deployed site-a (deployment #1)"]);
    // The model (through the SDK) saw the tool's schema.
    expect(fake.requests[from]?.body.tools?.map((t) => t.function.name)).toEqual(["deploy", "status", "page_title", "ask_user"]);
  });

  it("deny: the SDK rejects the call with the approver's reply; the tool does not run", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("deploy", { target: "site-b" }), toolCall("deploy", { target: "site-b" }), text("I will not deploy."));
    const waiting = await invoke(app, member.apiKey, "Deploy site-b.", { agent: "openai-agents" });
    expect(waiting.status).toBe("requires_action");
    const id = (waiting.requiredAction as { id: string }).id;
    const done = await ok200(await app.api(`/v1/approvals/${id}`, { key: approver.apiKey, body: { decision: "deny", message: "Freeze until Monday." } }));
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("I will not deploy.");
    const messages = toolMessages(fake, from);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain("Freeze until Monday.");
    expect(messages.join("\n")).not.toContain("deployed site-b");
  });

  it("a tool with policy never runs without asking anybody", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("status", { target: "site-a" }), text("site-a was deployed once"));
    const done = await invoke(app, member.apiKey, "How often was site-a deployed?", { agent: "openai-agents" });
    expect(done.status).toBe("completed");
    expect(toolMessages(fake, from)).toEqual(["site-a: 1 deployment(s)"]);
  });
});

describe("the host never imports the example plugins", () => {
  it("no module under server/ imports from examples/", () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (/\.(ts|tsx|js|mjs)$/.test(name) && /(from|import)\s*\(?\s*["'][^"']*examples\//.test(readFileSync(path, "utf8"))) offenders.push(path);
      }
    };
    walk(resolve("server"));
    expect(offenders).toEqual([]);
  });
});

describe(`the agents file names a plugin's native-loop harness (${testDbKind()})`, () => {
  let fileApp: TTestApp;
  beforeAll(async () => {
    const file = join(scratch, "agents.json");
    writeFileSync(
      file,
      JSON.stringify({
        agents: [
          {
            name: "file-notes",
            harness: "native-loop",
            model: "fake-file",
            endpoint: { baseURL: fake.url },
            tools: {},
            // The file's policy, not the plugin's: reading needs a person here, appending nobody.
            nativeTools: { read_notes: { approval: "always" }, append_note: { approval: "never" } },
          },
          {
            name: "file-reviewed",
            harness: "native-loop",
            model: "fake-file",
            endpoint: { baseURL: fake.url },
            tools: {},
            // Appending goes to the exec reviewer (the rule reviewer here: no model to ask).
            nativeTools: { read_notes: { approval: "never" }, append_note: { approval: "review" } },
          },
        ],
      }),
    );
    fileApp = await startTestApp({ agentsFile: file, plugins: [{ path: NATIVE, enabled: true }], reviewer: createRuleReviewer() });
  }, 180_000);
  afterAll(async () => {
    await fileApp?.close();
  });

  it("its agent runs on the plugin's harness with the file's policy for the native tools", async () => {
    const [user, operator] = await Promise.all([fileApp.user("member"), fileApp.user("operator")]);
    const from = fake.requests.length;
    fake.reply(toolCall("append_note", { text: "free" }), toolCall("read_notes", {}), toolCall("append_note", { text: "free" }), toolCall("read_notes", {}), text("read after approval"));
    const waiting = await invoke(fileApp, user.apiKey, "Note, then read.", { agent: "file-notes" });
    expect(waiting.status).toBe("requires_action");
    expect(waiting.requiredAction).toMatchObject({ type: "human_approval", action: "native:read_notes" });
    expect(fake.requests[from]?.body.model).toBe("fake-file");
    const done = await ok200(await decide(fileApp, operator.apiKey, (waiting.requiredAction as { id: string }).id, "approve"));
    expect(done.status).toBe("completed");
    // The append ran once (its recorded output was replayed in the re-run attempt), then the approved read.
    expect(toolMessages(fake, from).map((m) => JSON.parse(m))).toEqual([
      { appended: "free", lines: 1, checkedBy: "native-loop" },
      { notes: "free\n", checkedBy: "native-loop" },
    ]);
    expect(lineCount(workspaceOf(fileApp, waiting.sessionId as string), "notes.txt")).toBe(1);
  });

  it("a reviewer's deny of a native call reaches the loop with the rationale and the rejection guidance; nobody is asked and nothing runs", async () => {
    const user = await fileApp.user("member");
    const from = fake.requests.length;
    // The reviewer reads a call's `command` argument (else its arguments as JSON): the rules deny this one.
    fake.reply(toolCall("append_note", { text: "wipe", command: "rm -rf / --no-preserve-root" }), text("I will not."));
    const done = await invoke(fileApp, user.apiKey, "Note a command.", { agent: "file-reviewed" });
    expect(done.status).toBe("completed");
    const [refusal] = toolMessages(fake, from).map((m) => JSON.parse(m) as { refused: string; message: string });
    expect(refusal?.refused).toBe("reviewer_denied");
    expect(refusal?.message).toMatch(/^The exec reviewer denied this call; it was not run\. .+/);
    expect(refusal?.message).toContain("Do not pursue the same outcome through workarounds");
    expect(lineCount(workspaceOf(fileApp, done.sessionId as string), "notes.txt")).toBe(0);
  });

  it("a file agent naming a harness no enabled plugin registered stops the boot", async () => {
    const file = join(scratch, "agents-missing.json");
    writeFileSync(file, JSON.stringify({ agents: [{ name: "orphan", harness: "not-installed", tools: {} }] }));
    await expect(startTestApp({ agentsFile: file })).rejects.toThrow("The agent orphan runs on harness not-installed, which no enabled plugin registered");
  }, 120_000);
});

describe("native-loop registrations the host refuses at boot", () => {
  /** A plugin folder whose register() body is `body`. */
  const pluginWith = (name: string, body: string): string => {
    const dir = join(scratch, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "countersign.plugin.json"), JSON.stringify({ id: name, version: "1.0.0", pluginApi: "^1.1.0", runtimes: ["countersign"], main: "index.ts" }));
    writeFileSync(join(dir, "index.ts"), `export default { register(api) { ${body} } };\n`);
    return dir;
  };
  const load = (dir: string) =>
    loadPlugins([{ path: dir, enabled: true }], { harnesses: new HarnessRegistry(), agents: new AgentRegistry([]), middleware: createToolResultMiddlewareRegistry(), tools: HOST_TOOL_CATALOG, log: pino({ level: "silent" }) });

  it("a harness gives exactly one of createDriver and run", async () => {
    await expect(load(pluginWith("both", 'api.registerHarness({ id: "both", createDriver: () => ({ nextTurn: async () => null }), run: async () => ({ text: "" }) });'))).rejects.toThrow(
      "give exactly one of createDriver (the host runs the tools) and run (a native loop) as a function",
    );
    await expect(load(pluginWith("neither", 'api.registerHarness({ id: "neither" });'))).rejects.toThrow("give exactly one of createDriver");
  });

  it("nativeTools need a native-loop harness, and a native tool is not also a host tool", async () => {
    const driver = 'api.registerHarness({ id: "drv", createDriver: () => ({ nextTurn: async () => null }) });';
    await expect(load(pluginWith("driver-native", `${driver} api.registerAgent({ name: "a", harness: "drv", description: "", tools: [], nativeTools: ["x"] });`))).rejects.toThrow(
      "registerAgent(a): nativeTools need a native-loop harness; drv is not one.",
    );
    const native = 'api.registerHarness({ id: "nat", run: async () => ({ text: "" }) });';
    await expect(load(pluginWith("native-twice", `${native} api.registerAgent({ name: "b", harness: "nat", description: "", tools: ["exec"], nativeTools: ["exec"] });`))).rejects.toThrow(
      "registerAgent(b): exec is both a host tool and a native tool.",
    );
    expect(await load(pluginWith("native-ok", `${native} api.registerAgent({ name: "c", harness: "nat", description: "", tools: [], nativeTools: ["x"], approval: { x: "always" } });`))).toEqual([
      expect.objectContaining({ id: "native-ok", harnesses: ["nat"], agents: ["c"] }),
    ]);
  });
});
