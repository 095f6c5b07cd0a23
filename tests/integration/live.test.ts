import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testDbKind } from "../../db/testing";
import { approvals } from "../../db/schema";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, execTurn, expectOrdered, getResponse, invokeApproval, LiveClient, lineCount, ok200, script, type TWireFrame, waitUntil, workspaceOf } from "./helpers";

let app: TTestApp;
let operator: TTestUser;
const sockets: LiveClient[] = [];

beforeAll(async () => {
  app = await startTestApp();
  // Starts runs and decides them: an operator may approve its own (separation of duties is tested elsewhere).
  operator = await app.user("operator");
});
afterAll(async () => {
  for (const s of sockets) s.close();
  await app?.close();
});

const open = async (...args: Parameters<typeof LiveClient.open> extends [unknown, ...infer R] ? R : never) => {
  const s = await LiveClient.open(app, ...args);
  sockets.push(s);
  return s;
};

/** Sends response.create and waits for its response.created frame. */
async function create(live: LiveClient, input: unknown, requestId: string): Promise<string> {
  live.send({ type: "response.create", input, requestId });
  const created = await live.waitFor((f) => f.type === "response.created" && f.requestId === requestId);
  return created.responseId;
}

describe(`WS /v1/live (${testDbKind()})`, () => {
  it("connect answers session.connected; response.create echoes requestId on every frame", async () => {
    const live = await open(operator.apiKey);
    const connected = live.frames[0] as TWireFrame;
    expect(connected).toEqual({ type: "session.connected", sessionId: expect.stringMatching(/^sess_[0-9a-f]{32}$/) });
    const id = await create(live, script([{ text: "hi over ws" }]), "req-1");
    const done = await live.waitFor((f) => f.type === "response.completed" && f.responseId === id);
    const frames = live.of(id);
    expect(frames.map((f) => f.type)).toEqual(["response.created", "response.text.delta", "response.completed"]);
    expect(frames.map((f) => f.sequence)).toEqual([0, 1, 2]);
    for (const f of frames) expect(f).toMatchObject({ requestId: "req-1", responseId: id, sessionId: live.sessionId });
    expect(done).toMatchObject({ status: "completed", outputText: "hi over ws" });
    // The same response is visible over HTTP in the socket's session.
    expect((await ok200(await getResponse(app, operator.apiKey, id, live.sessionId))).status).toBe("completed");
  });

  it("connect may name an existing session of the user; a foreign one is refused", async () => {
    const first = await open(operator.apiKey);
    const again = await open(operator.apiKey, { sessionId: first.sessionId });
    expect(again.sessionId).toBe(first.sessionId);
    const other = await app.user("member");
    const foreign = await open(other.apiKey, { connect: false });
    foreign.send({ type: "connect", sessionId: first.sessionId });
    const error = await foreign.waitFor((f) => f.type === "error");
    expect(error.code).toBe("not_found");
    expect((await foreign.closed).code).toBe(1008);
  });

  it("approval on the socket: requested, requires_action, then resolved, tool_result, completed in order", async () => {
    const live = await open(operator.apiKey);
    const id = await create(live, script([execTurn("echo x >> count.txt"), { text: "ran it" }]), "req-approve");
    const requested = await live.waitFor((f) => f.type === "approval.requested" && f.responseId === id);
    const boundary = await live.waitFor((f) => f.type === "response.completed" && f.responseId === id);
    expect(boundary.status).toBe("requires_action");
    const approval = requested.approval as { id: string; cwd: string };
    expect(boundary.requiredAction).toEqual(requested.approval);
    expect(live.isOpen).toBe(true);

    live.send({ type: "approval.decision", responseId: id, approvalId: approval.id, decision: "approve" });
    await live.waitFor((f) => f.type === "response.completed" && f.responseId === id && f.status === "completed");
    const frames = live.of(id);
    expectOrdered(frames, [
      "response.created",
      "response.tool_call",
      "approval.requested",
      "response.completed",
      "approval.resolved",
      "response.tool_result",
      "response.text.delta",
      "response.completed",
    ]);
    expect(frames.map((f) => f.sequence)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const resolved = frames[4] as TWireFrame;
    expect(resolved).toEqual({ type: "approval.resolved", sequence: 4, responseId: id, sessionId: live.sessionId, approvalId: approval.id, decision: "approve", requestId: "req-approve" });
    expect(frames[5]).toMatchObject({ callId: "call_0_0", name: "exec", output: { exitCode: 0 } });
    expect(lineCount(workspaceOf(app, requested.sessionId), "count.txt")).toBe(1);
    const [row] = await app.deps.db.select().from(approvals).where(eq(approvals.id, approval.id));
    expect(row).toMatchObject({ status: "approved", decidedVia: "websocket", decidedBy: operator.userId });
  });

  it("a client tool on the socket: client_tool.requested, no requires_action frame, result continues the run", async () => {
    const live = await open(operator.apiKey);
    const id = await create(live, script([{ toolCalls: [{ name: "get_page_context" }] }, { text: "thanks" }]), "req-ct");
    const requested = await live.waitFor((f) => f.type === "client_tool.requested" && f.responseId === id);
    const clientTool = requested.clientTool as { id: string; name: string; privateInput?: boolean; inputSchema?: unknown };
    expect(clientTool).toMatchObject({ type: "client_tool", name: "get_page_context", arguments: {} });
    expect(clientTool.privateInput).toBeUndefined();
    expect(clientTool.inputSchema).toBeUndefined();
    // No requires_action frame on the socket: the whole ordered sequence below, read once the run has
    // completed (every frame of it in), has none between client_tool.requested and the result.
    expect(live.of(id).some((f) => f.type === "response.completed")).toBe(false);

    live.send({ type: "client_tool.result", requestId: clientTool.id, output: { url: "https://example.test/", title: "Example" } });
    const done = await live.waitFor((f) => f.type === "response.completed" && f.responseId === id);
    expect(done.status).toBe("completed");
    expectOrdered(live.of(id), ["response.created", "response.tool_call", "client_tool.requested", "response.tool_result", "response.text.delta", "response.completed"]);
    expect(live.of(id)[3]).toMatchObject({ callId: "call_0_0", name: "get_page_context", output: { url: "https://example.test/", title: "Example" } });
    // A result failing the schema is an error frame, not a close.
    const again = await create(live, script([{ toolCalls: [{ name: "get_page_context" }] }]), "req-ct2");
    const second = await live.waitFor((f) => f.type === "client_tool.requested" && f.responseId === again);
    live.send({ type: "client_tool.result", requestId: (second.clientTool as { id: string }).id, output: { url: 5 } });
    const error = await live.waitFor((f) => f.type === "error" && f.requestId === (second.clientTool as { id: string }).id);
    expect(error.code).toBe("validation_failed");
    expect(live.isOpen).toBe(true);
  });

  it("deny on the socket ends with response.completed denied; the command never runs", async () => {
    const live = await open(operator.apiKey);
    const id = await create(live, script([execTurn("echo ran > side.txt")]), "req-deny");
    const requested = await live.waitFor((f) => f.type === "approval.requested" && f.responseId === id);
    const approval = requested.approval as { id: string; cwd: string };
    // Watched at the spawner until the run is over (its terminal frame): the command is never asked for.
    const spawned = vi.spyOn(app.deps.sandbox.spawner, "run");
    let done: TWireFrame;
    try {
      live.send({ type: "approval.decision", responseId: id, approvalId: approval.id, decision: "deny" });
      done = await live.waitFor((f) => f.type === "response.completed" && f.responseId === id && f.status !== "requires_action");
      expect(spawned).not.toHaveBeenCalled();
    } finally {
      spawned.mockRestore();
    }
    expect(done).toMatchObject({ status: "denied", outputText: "", output: [] });
    const resolved = live.of(id).find((f) => f.type === "approval.resolved");
    expect(resolved).toMatchObject({ approvalId: approval.id, decision: "deny" });
    expect((resolved as TWireFrame).sequence).toBe(done.sequence - 1);
    expect(lineCount(workspaceOf(app, requested.sessionId), "side.txt")).toBe(0);
  });

  it("response.cancel cancels a waiting response; an unknown id gets an error frame and the socket stays open", async () => {
    const live = await open(operator.apiKey);
    const id = await create(live, script([execTurn("echo ran > side.txt")]), "req-cancel");
    await live.waitFor((f) => f.type === "approval.requested" && f.responseId === id);
    live.send({ type: "response.cancel", responseId: id });
    const done = await live.waitFor((f) => f.type === "response.completed" && f.responseId === id && f.status !== "requires_action");
    expect(done).toMatchObject({ status: "cancelled", requestId: "req-cancel" });

    live.send({ type: "response.cancel", responseId: "resp_unknown" });
    const error = await live.waitFor((f) => f.type === "error" && f.responseId === "resp_unknown");
    expect(error).toMatchObject({ code: "not_found", detail: expect.any(String) });
    expect(live.isOpen).toBe(true);
    const next = await create(live, "still here", "req-after");
    expect((await live.waitFor((f) => f.type === "response.completed" && f.responseId === next)).status).toBe("completed");
  });

  it("an error for a failed response.create echoes its requestId", async () => {
    const live = await open(operator.apiKey);
    live.send({ type: "response.create", input: { script: [] }, requestId: "req-bad" });
    const error = await live.waitFor((f) => f.type === "error");
    expect(error).toMatchObject({ code: "invalid_request", requestId: "req-bad" });
    expect(live.isOpen).toBe(true);
  });

  it("a first frame other than connect gets an error frame and close 1008", async () => {
    const live = await open(operator.apiKey, { connect: false });
    live.send({ type: "response.create", input: "hi" });
    const error = await live.waitFor((f) => f.type === "error");
    expect(error.code).toBe("invalid_request");
    expect((await live.closed).code).toBe(1008);

    const garbage = await open(operator.apiKey, { connect: false });
    garbage.send("not json");
    expect((await garbage.closed).code).toBe(1008);
    expect(garbage.frames.map((f) => f.type)).toEqual(["error"]);
  });

  it("malformed later frames get error frames and the socket stays open", async () => {
    const live = await open(operator.apiKey);
    live.send("{not json");
    live.send({ type: "nonsense" });
    live.send({ type: "response.create" });
    live.send({ type: "response.create", input: "x", extra: true });
    live.send({ type: "response.create", input: "" });
    live.send({ type: "approval.decision", responseId: "r", approvalId: "a", decision: "maybe" });
    const errors = await live.waitForCount((f) => f.type === "error", 6);
    for (const e of errors) expect(e).toMatchObject({ code: "invalid_request", detail: expect.any(String), error: { code: "invalid_request", message: expect.any(String) } });
    expect(live.isOpen).toBe(true);
    live.send({ type: "approval.decision", responseId: "resp_x", approvalId: "approval_x", decision: "approve" });
    expect((await live.waitFor((f) => f.type === "error" && f.responseId === "resp_x")).code).toBe("not_found");
  });

  it("the 1025th frame on one connection closes it with 1008", async () => {
    const live = await open(operator.apiKey); // the connect frame is frame 1
    for (let i = 0; i < 1023; i++) live.send({ type: "bogus" });
    await live.waitForCount((f) => f.type === "error", 1023, 20_000);
    expect(live.isOpen).toBe(true);
    live.send({ type: "bogus" });
    const closed = await live.closed;
    expect(closed.code).toBe(1008);
    expect(live.frames.filter((f) => f.type === "error")).toHaveLength(1023);
  });

  it("missing or bad credentials close with 4401; access_token works", async () => {
    const none = await open(null, { connect: false });
    expect((await none.closed).code).toBe(4401);
    const bad = await open("cs_not-a-real-key", { connect: false });
    expect((await bad.closed).code).toBe(4401);
    const basic = await open(null, { connect: false, headers: { authorization: "Basic Zm9vOmJhcg==" } });
    expect((await basic.closed).code).toBe(4401);
    const viaQuery = await open(null, { query: `access_token=${encodeURIComponent(operator.apiKey)}` });
    expect(viaQuery.sessionId).toMatch(/^sess_/);
  });

  it("a socket that drops leaves the approval pending; it can be decided over HTTP", async () => {
    // Its request id (the traceparent's trace id) names the socket's access line, written when the
    // server sees it close: then the server has handled the drop (instead of a pause).
    const requestId = randomBytes(16).toString("hex");
    const live = await open(operator.apiKey, { headers: { traceparent: `00-${requestId}-00f067aa0ba902b7-01` } });
    const id = await create(live, script([execTurn("echo x >> count.txt"), { text: "finished" }]), "req-drop");
    const requested = await live.waitFor((f) => f.type === "approval.requested" && f.responseId === id);
    const sessionId = live.sessionId;
    live.close();
    await live.closed;
    await waitUntil(() => app.logs().includes(`"requestId":"${requestId}"`), 30_000, "the server to see the socket close");
    const approval = requested.approval as { id: string; cwd: string };
    const waiting = await ok200(await getResponse(app, operator.apiKey, id, sessionId));
    expect(waiting.status).toBe("requires_action");
    expect(waiting.requiredAction?.id).toBe(approval.id);
    const done = await ok200(await decide(app, operator.apiKey, approval.id, "approve"));
    expect(done).toMatchObject({ status: "completed", outputText: "finished", approvalId: approval.id });
    expect(lineCount(workspaceOf(app, requested.sessionId), "count.txt")).toBe(1);
  });

  it("a decision made over HTTP reaches the socket following the response as approval.resolved", async () => {
    const live = await open(operator.apiKey);
    const id = await create(live, script([execTurn("true"), { text: "ok" }]), "req-http");
    const requested = await live.waitFor((f) => f.type === "approval.requested" && f.responseId === id);
    const done = await ok200(await decide(app, operator.apiKey, (requested.approval as { id: string }).id, "approve"));
    expect(done.status).toBe("completed");
    await live.waitFor((f) => f.type === "response.completed" && f.responseId === id && f.status === "completed");
    const frames = live.of(id);
    expectOrdered(frames.slice(4), ["approval.resolved", "response.tool_result", "response.text.delta", "response.completed"]);
    expect(frames.map((f) => f.sequence)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("another socket of the same user may decide; it then receives the rest of the run", async () => {
    const { env, approval } = await invokeApproval(app, operator.apiKey, "true");
    const bystander = await open(operator.apiKey, { sessionId: env.sessionId });
    const other = await open(operator.apiKey);
    other.send({ type: "approval.decision", responseId: env.id, approvalId: approval.id, decision: "approve" });
    const done = await other.waitFor((f) => f.type === "response.completed" && f.responseId === env.id);
    expect(done.status).toBe("completed");
    expectOrdered(other.of(env.id), ["approval.resolved", "response.tool_result", "response.text.delta", "response.completed"]);
    expect(other.of(env.id)[0]?.sequence).toBe(4);
    expect(bystander.of(env.id)).toEqual([]);
  });

  it("session.close closes the socket normally", async () => {
    const live = await open(operator.apiKey);
    live.send({ type: "session.close" });
    expect((await live.closed).code).toBe(1000);
  });
});
