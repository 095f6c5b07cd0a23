import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import type { TTestApp, TTestUser } from "../../server/testing/test-app";
import type { TFakeModel } from "./fake-openai";
import { startPluginApp, text, toolCall, toolMessages as lastToolMessages, trajectoryOf as runTrajectory } from "./plugin-model-helpers";
import { decide, getResponse, invoke, lineCount, ok200, waitUntil, workspaceOf } from "./helpers";

/**
 * Issue 17, plugin API 1.2: a native loop's calls get what the host's own tools get. An approver
 * edits a native call's arguments (validated against the schema the plugin gave), a native tool
 * marked `client` runs on the connected client through the client-tool request hosted tools use,
 * and the host's tool-result middleware rewrites native results before the loop feeds its model.
 * The example plugin is loaded from its folder through a plugins file and driven through /v1.
 */
const NATIVE = resolve("examples/plugins/native-loop");

const toolMessages = (fake: TFakeModel, from: number): unknown[] => lastToolMessages(fake, from).map((m) => JSON.parse(m));

let app: TTestApp;
let fake: TFakeModel;
let close: () => Promise<void>;
let member: TTestUser;
let approver: TTestUser;

const trajectoryOf = (id: string) => runTrajectory(app, member.apiKey, id);

beforeAll(async () => {
  ({ app, fake, close } = await startPluginApp([NATIVE], "fake-native"));
  member = await app.user("member");
  approver = await app.user("operator");
}, 180_000);
afterAll(async () => {
  await close?.();
});

describe(`an approver edits a native call's arguments against the plugin's schema (${testDbKind()})`, () => {
  it("an edit the schema refuses is a 422 and nothing is approved; a valid edit runs instead of the requested call and the model is told", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("append_note", { text: "draft" }), toolCall("append_note", { text: "draft" }), text("noted"));
    const waiting = await invoke(app, member.apiKey, "Note 'draft'.", { agent: "native-loop" });
    expect(waiting.status).toBe("requires_action");
    const id = (waiting.requiredAction as { id: string }).id;
    // The plugin's parameters: `text` is a string and no other property is allowed.
    const wrongType = await app.api(`/v1/approvals/${id}`, { key: approver.apiKey, body: { decision: "approve", arguments: { text: 42 } } });
    expect(wrongType.status).toBe(422);
    expect(((await wrongType.json()) as { detail: string }).detail).toMatch(/^The edited arguments are not valid for append_note: text: .+\. Nothing was approved\.$/);
    const extra = await app.api(`/v1/approvals/${id}`, { key: approver.apiKey, body: { decision: "approve", arguments: { text: "x", mode: "overwrite" } } });
    expect(extra.status).toBe(422);
    expect(((await extra.json()) as { detail: string }).detail).toContain("The edited arguments are not valid for append_note:");
    const workspace = workspaceOf(app, waiting.sessionId as string);
    expect(lineCount(workspace, "notes.txt")).toBe(0);
    // Still pending: a valid edit is approved and the loop runs the edited call.
    const done = await ok200(await app.api(`/v1/approvals/${id}`, { key: approver.apiKey, body: { decision: "approve", arguments: { text: "final" } } }));
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("noted");
    expect(readFileSync(join(workspace, "notes.txt"), "utf8")).toBe("final\n");
    expect(fake.requests.length - from).toBe(3);
    expect(toolMessages(fake, from)).toEqual([
      {
        appended: "final",
        lines: 1,
        checkedBy: "native-loop",
        approverEdit: {
          note: "An approver edited the arguments before approving; the edited call ran instead of the requested one.",
          requestedArguments: { text: "draft" },
          arguments: { text: "final" },
        },
      },
    ]);
    const trajectory = await trajectoryOf(done.id as string);
    expect(trajectory.find((e) => e.type === "approval.resolved")?.data).toMatchObject({ edited: { originalArguments: { text: "draft" }, arguments: { text: "final" } } });
    expect(trajectory.filter((e) => e.type === "native_tool.decision").map((e) => e.data)).toEqual([expect.objectContaining({ toolName: "append_note", allow: true, edited: true })]);
  });

  it("an edit of the arguments keeps the call's own cwd", async () => {
    fake.reply(toolCall("read_notes", {}), text("empty"));
    const first = await invoke(app, member.apiKey, "Read the notes.", { agent: "native-loop" });
    const sessionId = first.sessionId as string;
    const workspace = workspaceOf(app, sessionId);
    mkdirSync(join(workspace, "sub"));
    fake.reply(toolCall("append_note", { text: "in sub", cwd: "sub" }), toolCall("append_note", { text: "in sub", cwd: "sub" }), text("noted"));
    const waiting = await invoke(app, member.apiKey, "Note it in sub.", { agent: "native-loop", sessionId });
    expect(waiting.requiredAction).toMatchObject({ arguments: { text: "in sub" }, cwd: "sub" });
    const id = (waiting.requiredAction as { id: string }).id;
    const done = await ok200(await app.api(`/v1/approvals/${id}`, { key: approver.apiKey, body: { decision: "approve", arguments: { text: "edited in sub" } } }));
    expect(done.status).toBe("completed");
    expect(readFileSync(join(workspace, "sub", "notes.txt"), "utf8")).toBe("edited in sub\n");
    expect(lineCount(workspace, "notes.txt")).toBe(0);
  });

  it("the console's decision (tRPC approvals.decide) takes an edit through the same validation", async () => {
    fake.reply(toolCall("append_note", { text: "console draft" }), toolCall("append_note", { text: "console draft" }), text("noted"));
    const waiting = await invoke(app, member.apiKey, "Note 'console draft'.", { agent: "native-loop" });
    const id = (waiting.requiredAction as { id: string }).id;
    const trpc = (path: string, init: { input: unknown; mutation?: boolean }) =>
      init.mutation
        ? fetch(`${app.url}/api/trpc/${path}`, { method: "POST", headers: { authorization: `Bearer ${approver.apiKey}`, "content-type": "application/json" }, body: JSON.stringify(init.input) })
        : fetch(`${app.url}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(init.input))}`, { headers: { authorization: `Bearer ${approver.apiKey}` } });
    type TListed = { id: string; bindingHash: string; options: { editable: boolean; argumentsSchema: unknown } };
    const listed = (await (await trpc("approvals.list", { input: { status: "pending", ids: [id] } })).json()) as { result: { data: TListed[] } };
    const row = listed.result.data.find((a) => a.id === id);
    const bindingHash = row?.bindingHash;
    expect(bindingHash).toBeTruthy();
    // The console's edit form is built from the schema the plugin gave for the call (here and in the inbox).
    const schema = { type: "object", properties: { text: { type: "string" }, cwd: { type: "string" } }, required: ["text"], additionalProperties: false };
    expect(row?.options).toMatchObject({ editable: true, argumentsSchema: schema });
    const inbox = (await (await trpc("inbox.list", { input: { status: "pending" } })).json()) as { result: { data: { rows: TListed[] } } };
    expect(inbox.result.data.rows.find((a) => a.id === id)?.options).toMatchObject({ editable: true, argumentsSchema: schema });
    const refused = await trpc("approvals.decide", { mutation: true, input: { approvalId: id, decision: "approve", bindingHash, arguments: { text: ["not", "a", "string"] } } });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(await refused.json())).toContain("The edited arguments are not valid for append_note:");
    const decided = await trpc("approvals.decide", { mutation: true, input: { approvalId: id, decision: "approve", bindingHash, arguments: { text: "console final" } } });
    expect(decided.status).toBe(200);
    expect(((await decided.json()) as { result: { data: { edited: boolean } } }).result.data.edited).toBe(true);
    const done = await waitUntil(async () => {
      const body = (await (await getResponse(app, member.apiKey, waiting.id as string, waiting.sessionId as string)).json()) as { status: string };
      return body.status === "completed" ? body : null;
    }, 20_000, "the run to complete");
    expect(done.status).toBe("completed");
    expect(readFileSync(join(workspaceOf(app, waiting.sessionId as string), "notes.txt"), "utf8")).toBe("console final\n");
  });

  it("a call whose plugin gave no schema cannot be edited (422 naming the tool); approved as asked, it runs", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("append_note", { text: "draft" }), toolCall("append_note", { text: "draft" }), text("noted"));
    const waiting = await invoke(app, member.apiKey, { text: "Note 'draft'.", schemas: false }, { agent: "native-loop" });
    expect(waiting.status).toBe("requires_action");
    const id = (waiting.requiredAction as { id: string }).id;
    const edit = await app.api(`/v1/approvals/${id}`, { key: approver.apiKey, body: { decision: "approve", arguments: { text: "final" } } });
    expect(edit.status).toBe(422);
    expect(((await edit.json()) as { detail: string }).detail).toBe("The arguments of append_note cannot be edited here; approve or deny it as asked.");
    // The console offers no edit form for it either.
    const listed = await fetch(`${app.url}/api/trpc/approvals.list?input=${encodeURIComponent(JSON.stringify({ status: "pending", ids: [id] }))}`, { headers: { authorization: `Bearer ${approver.apiKey}` } });
    const rows = ((await listed.json()) as { result: { data: Array<{ id: string; options: unknown }> } }).result.data;
    expect(rows.find((a) => a.id === id)?.options).toMatchObject({ editable: false, argumentsSchema: null });
    expect((await ok200(await decide(app, approver.apiKey, id, "approve"))).status).toBe("completed");
    expect(readFileSync(join(workspaceOf(app, waiting.sessionId as string), "notes.txt"), "utf8")).toBe("draft\n");
    expect(toolMessages(fake, from)).toEqual([{ appended: "draft", lines: 1, checkedBy: "native-loop" }]);
  });
});

describe(`a native tool marked client runs on the connected client (${testDbKind()})`, () => {
  it("approved by a person, the call becomes the client-tool request; the client's output is what the loop feeds the model, and nothing runs in the loop", async () => {
    const from = fake.requests.length;
    // Three attempts: the approval, the client tool, then the answer.
    fake.reply(toolCall("page_title", {}), toolCall("page_title", {}), toolCall("page_title", {}), text("The page is Countersign."));
    const asked = await invoke(app, member.apiKey, "What page am I on?", { agent: "native-loop" });
    expect(asked.status).toBe("requires_action");
    expect(asked.requiredAction).toMatchObject({ type: "human_approval", action: "native:page_title", arguments: {} });
    const waiting = await ok200(await decide(app, approver.apiKey, (asked.requiredAction as { id: string }).id, "approve"));
    expect(waiting.status).toBe("requires_action");
    const action = waiting.requiredAction as { type: string; id: string; name: string; arguments: unknown };
    expect(action).toMatchObject({ type: "client_tool", name: "page_title", arguments: {} });
    expect(action.id).toMatch(/^client_tool_/);
    const done = await ok200(await app.api(`/v1/client-tools/${action.id}`, { key: member.apiKey, body: { output: { title: "Countersign" } } }));
    expect(done.status).toBe("completed");
    expect(done.clientToolId).toBe(action.id);
    expect(done.outputText).toBe("The page is Countersign.");
    expect(toolMessages(fake, from)).toEqual([{ title: "Countersign" }]);
    expect(fake.requests.length - from).toBe(4);
    // The result is used once.
    const again = await app.api(`/v1/client-tools/${action.id}`, { key: member.apiKey, body: { output: { title: "other" } } });
    expect(again.status).toBe(409);
    const trajectory = await trajectoryOf(done.id as string);
    expect(trajectory.filter((e) => e.type === "approval.requested")).toHaveLength(1);
    expect(trajectory.filter((e) => e.type === "client_tool.requested")).toHaveLength(1);
    expect(trajectory.find((e) => e.type === "client_tool.submitted")?.data).toMatchObject({ name: "page_title", output: { title: "Countersign" } });
    expect(trajectory.filter((e) => e.type === "native_tool.decision").map((e) => e.data)).toEqual([expect.objectContaining({ toolName: "page_title", allow: true })]);
    expect(trajectory.find((e) => e.type === "harness.tool_surface.finalized")?.data).toMatchObject({ client: ["page_title"] });
    expect(done.output).toEqual(expect.arrayContaining([expect.objectContaining({ type: "tool_result", name: "page_title", output: { title: "Countersign" } })]));
  });

  it("denied, the client is never asked and the model reads the reply", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("page_title", {}), toolCall("page_title", {}), text("I may not look."));
    const asked = await invoke(app, member.apiKey, "What page am I on?", { agent: "native-loop" });
    const done = await ok200(await app.api(`/v1/approvals/${(asked.requiredAction as { id: string }).id}`, { key: approver.apiKey, body: { decision: "deny", message: "Not the page." } }));
    expect(done.status).toBe("completed");
    expect(toolMessages(fake, from)).toEqual([{ refused: "denied", message: "Not the page." }]);
    expect((await trajectoryOf(done.id as string)).filter((e) => e.type === "client_tool.requested")).toHaveLength(0);
  });

  it("a client tool the toolExecutionAllow list excludes is refused and the client is never asked", async () => {
    const from = fake.requests.length;
    fake.reply(toolCall("page_title", {}), text("I cannot see the page."));
    const done = await invoke(app, member.apiKey, { text: "What page?", toolExecutionAllow: ["read_notes"] }, { agent: "native-loop" });
    expect(done.status).toBe("completed");
    expect(toolMessages(fake, from)).toEqual([{ refused: "not_executable", message: expect.stringContaining("page_title may not run") }]);
    expect((await trajectoryOf(done.id as string)).filter((e) => e.type === "client_tool.requested")).toHaveLength(0);
  });
});

describe(`the host's tool-result middleware runs on native tools' results (${testDbKind()})`, () => {
  it("rewrites a native result before the loop feeds it to its model; a throwing middleware is skipped; the rewritten result is what is recorded and replayed", async () => {
    // A first run creates the session's workspace; the notes are the user's file there.
    fake.reply(toolCall("read_notes", {}), text("empty"));
    const first = await invoke(app, member.apiKey, "Read the notes.", { agent: "native-loop" });
    expect(first.status).toBe("completed");
    const sessionId = first.sessionId as string;
    const workspace = workspaceOf(app, sessionId);
    writeFileSync(join(workspace, "notes.txt"), "buy milk\nprivate: pin 1234\n");
    let from = fake.requests.length;
    fake.reply(toolCall("read_notes", {}), text("read"));
    const read = await invoke(app, member.apiKey, "Read the notes.", { agent: "native-loop", sessionId });
    expect(read.status).toBe("completed");
    expect(toolMessages(fake, from)).toEqual([{ notes: "buy milk\n[withheld]\n", checkedBy: "native-loop" }]);
    expect(JSON.stringify(read.output)).not.toContain("pin 1234");
    const events = (await trajectoryOf(read.id as string)).filter((e) => e.type === "harness.tool_result.middleware");
    expect(events.map((e) => e.data)).toEqual([expect.objectContaining({ appliedBy: ["native-loop"], skipped: 0 })]);

    // The second middleware throws on this line: it is skipped, the first one's rewrite goes on.
    writeFileSync(join(workspace, "notes.txt"), "!fail-middleware\nprivate: pin 1234\n");
    from = fake.requests.length;
    fake.reply(toolCall("read_notes", {}), text("read again"));
    const skipped = await invoke(app, member.apiKey, "Read the notes.", { agent: "native-loop", sessionId });
    expect(skipped.status).toBe("completed");
    expect(toolMessages(fake, from)).toEqual([{ notes: "!fail-middleware\n[withheld]\n", checkedBy: "native-loop" }]);
    const skippedEvents = (await trajectoryOf(skipped.id as string)).filter((e) => e.type === "harness.tool_result.middleware");
    expect(skippedEvents.map((e) => e.data)).toEqual([expect.objectContaining({ appliedBy: ["native-loop"], skipped: 1 })]);
  });

  it("a failed native result stays a failure after the rewrite (isError, originalError), and a re-run attempt replays the rewritten result", async () => {
    const from = fake.requests.length;
    // The empty append fails in the plugin; it is approved first, then a read needs nobody, then the next append waits again.
    fake.reply(toolCall("append_note", { text: " " }), toolCall("append_note", { text: " " }), toolCall("append_note", { text: "second" }), toolCall("append_note", { text: " " }), toolCall("append_note", { text: "second" }), text("done"));
    const waiting = await invoke(app, member.apiKey, "Note nothing, then 'second'.", { agent: "native-loop" });
    expect(waiting.status).toBe("requires_action");
    const next = await ok200(await decide(app, approver.apiKey, (waiting.requiredAction as { id: string }).id, "approve"));
    expect(next.status).toBe("requires_action");
    expect(next.requiredAction).toMatchObject({ type: "human_approval", arguments: { text: "second" } });
    const done = await ok200(await decide(app, approver.apiKey, (next.requiredAction as { id: string }).id, "approve"));
    expect(done.status).toBe("completed");
    const failure = { error: "Nothing to append: the text is empty.", checkedBy: "native-loop", isError: true, originalError: { error: "Nothing to append: the text is empty." } };
    // The third attempt got the first call's rewritten result back (replayed.output), not a second run of it.
    expect(toolMessages(fake, from)).toEqual([failure, { appended: "second", lines: 1, checkedBy: "native-loop" }]);
    expect(lineCount(workspaceOf(app, waiting.sessionId as string), "notes.txt")).toBe(1);
    expect(done.output).toEqual(expect.arrayContaining([expect.objectContaining({ type: "tool_result", name: "append_note", output: failure })]));
    expect((await trajectoryOf(done.id as string)).filter((e) => e.type === "harness.tool_result.middleware")).toHaveLength(2);
  });
});
