import { readFileSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approvals, grants, responseEvents } from "../../db/schema";
import { testDbKind } from "../../db/testing";
import { createRuleReviewer } from "../../server/reviewer";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { execTurn, expectError, invoke, invokeApproval, LiveClient, lineCount, ok200, script, type TBody, tableCounts, workspaceOf } from "./helpers";

let app: TTestApp;
let member: TTestUser;
let operator: TTestUser;
let auditor: TTestUser;
let other: TTestUser;

beforeAll(async () => {
  app = await startTestApp({ reviewer: createRuleReviewer() });
  member = await app.user("member");
  operator = await app.user("operator");
  auditor = await app.user("auditor");
  other = await app.user("member");
});
afterAll(async () => {
  await app?.close();
});

const decideWith = (key: string, approvalId: string, body: Record<string, unknown>) => app.api(`/v1/approvals/${approvalId}`, { key, body });
const approvalRow = async (id: string) => (await app.deps.db.select().from(approvals).where(eq(approvals.id, id)))[0];
const eventsOf = async (responseId: string) => app.deps.db.select().from(responseEvents).where(eq(responseEvents.responseId, responseId)).orderBy(responseEvents.seq);
const toolResults = (env: TBody) => env.output.filter((i) => i.type === "tool_result") as Array<{ type: "tool_result"; output: Record<string, unknown> }>;
const trpc = async (key: string, path: string, input: unknown) => {
  const res = await fetch(`${app.url}/api/trpc/${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(input) });
  return { status: res.status, body: (await res.json()) as { result?: { data: unknown }; error?: { message: string; data?: { code: string } } } };
};

// The member starts the runs; an operator decides them (a member never decides its own run's approvals).
describe(`edit before approve (${testDbKind()})`, () => {
  it("runs the edited command only, once; both argument sets are recorded; the agent sees the edit", async () => {
    const { env, approval, cwd } = await invokeApproval(app, member.apiKey, "echo original >> ran.txt");
    const res = await decideWith(operator.apiKey, approval.id, { decision: "approve", arguments: { command: "echo edited >> ran.txt" } });
    const body = await ok200(res);
    expect(body).toMatchObject({ id: env.id, status: "completed", approvalId: approval.id });
    expect(readFileSync(join(cwd, "ran.txt"), "utf8")).toBe("edited\n");
    const [result] = toolResults(body);
    expect(result?.output).toMatchObject({ exitCode: 0, approverEdit: { requestedArguments: { command: "echo original >> ran.txt" }, arguments: { command: "echo edited >> ran.txt" } } });
    const row = await approvalRow(approval.id);
    expect(row).toMatchObject({ status: "approved", originalArguments: { command: "echo original >> ran.txt" }, arguments: { command: "echo edited >> ran.txt" } });
    expect(row?.originalBindingHash).toBeTruthy();
    expect(row?.bindingHash).not.toBe(row?.originalBindingHash);
    expect(row?.message).toContain("echo edited");
    const resolved = (await eventsOf(env.id)).find((e) => e.type === "approval.resolved");
    expect(resolved?.data).toMatchObject({ decision: "approve", edited: { originalArguments: { command: "echo original >> ran.txt" }, arguments: { command: "echo edited >> ran.txt" } } });
    // The tool call item keeps what the agent asked; the result says what ran.
    expect(body.output.find((i) => i.type === "tool_call")).toMatchObject({ arguments: { command: "echo original >> ran.txt" } });
    await expectError(await decideWith(operator.apiKey, approval.id, { decision: "approve" }), 409, "already_decided");
    expect(lineCount(cwd, "ran.txt")).toBe(1);
  });

  it("an edit that fails the tool's schema gets 422 and changes nothing; the approval is still decidable", async () => {
    const { env, approval, cwd } = await invokeApproval(app, member.apiKey, "echo first >> ran.txt");
    const before = await approvalRow(approval.id);
    const counts = await tableCounts(app);
    for (const bad of [{ command: "" }, { command: 42 }, { cmd: "ls" }, { command: "ls", timeoutMs: -1 }]) {
      const err = await expectError(await decideWith(operator.apiKey, approval.id, { decision: "approve", arguments: bad }), 422, "validation_failed");
      expect(err.detail).toMatch(/not valid for exec/);
    }
    for (const bad of [{ decision: "approve", arguments: "ls" }, { decision: "approve", arguments: ["ls"] }, { decision: "approve", arguments: null }]) {
      await expectError(await decideWith(operator.apiKey, approval.id, bad), 400, "invalid_request");
    }
    await expectError(await decideWith(operator.apiKey, approval.id, { decision: "deny", arguments: { command: "ls" } }), 400, "invalid_request");
    expect(await tableCounts(app)).toEqual(counts);
    expect(await approvalRow(approval.id)).toEqual(before);
    const body = await ok200(await decideWith(operator.apiKey, approval.id, { decision: "approve" }));
    expect(body.status).toBe("completed");
    expect(readFileSync(join(cwd, "ran.txt"), "utf8")).toBe("first\n");
    expect(toolResults(body)[0]?.output.approverEdit).toBeUndefined();
    expect(env.id).toBe(body.id);
  });

  it("an edit identical to the request is a plain approval", async () => {
    const { approval } = await invokeApproval(app, member.apiKey, "echo same");
    const body = await ok200(await decideWith(operator.apiKey, approval.id, { decision: "approve", arguments: { command: "echo same" } }));
    expect(toolResults(body)[0]?.output).toEqual({ exitCode: 0, stdout: "same\n", stderr: "" });
    expect((await approvalRow(approval.id))?.originalArguments).toBeNull();
  });

  it("with policy review, the reviewer re-reviews the edit: a denied edit approves nothing, an accepted one runs", async () => {
    const res = await app.api("/v1/responses", { key: member.apiKey, body: { agent: "scripted-reviewed", input: script([execTurn("echo asked > reviewed.txt"), { text: "done" }]) } });
    const env = (await res.json()) as TBody & { requiredAction: { id: string; cwd: string } };
    expect(env.status).toBe("requires_action");
    const approvalId = env.requiredAction.id;
    const err = await expectError(await decideWith(operator.apiKey, approvalId, { decision: "approve", arguments: { command: "rm -rf /" } }), 422, "validation_failed");
    expect(err.detail).toMatch(/reviewer denied the edited operation/);
    expect((await approvalRow(approvalId))?.status).toBe("pending");
    const body = await ok200(await decideWith(operator.apiKey, approvalId, { decision: "approve", arguments: { command: "echo edited > reviewed.txt" } }));
    expect(body.status).toBe("completed");
    expect(readFileSync(join(workspaceOf(app, env.sessionId), "reviewed.txt"), "utf8")).toBe("edited\n");
    const verdicts = (await eventsOf(env.id)).filter((e) => e.type === "review.verdict");
    expect(verdicts).toHaveLength(2);
    expect(verdicts[1]?.data).toMatchObject({ edited: true, decision: "ask" });
  });

  it("edits arrive over the WebSocket frame and the console procedure too", async () => {
    // An operator's own run: it may decide its own approvals (the demo agent's selfApproval "operators").
    const live = await LiveClient.open(app, operator.apiKey);
    live.send({ type: "response.create", input: script([execTurn("echo ws-asked >> ws.txt"), { text: "done" }]) });
    const requested = await live.waitFor((f) => f.type === "approval.requested");
    const approval = (requested as unknown as { approval: { id: string; cwd: string } }).approval;
    live.send({ type: "approval.decision", responseId: requested.responseId, approvalId: approval.id, decision: "approve", arguments: { command: "echo ws-edited >> ws.txt" } });
    const resolved = await live.waitFor((f) => f.type === "approval.resolved");
    expect(resolved).toMatchObject({ decision: "approve", edited: { arguments: { command: "echo ws-edited >> ws.txt" } } });
    await live.waitFor((f) => f.type === "response.completed" && (f as unknown as { status: string }).status === "completed");
    expect(readFileSync(join(workspaceOf(app, requested.sessionId), "ws.txt"), "utf8")).toBe("ws-edited\n");
    live.send({ type: "approval.decision", responseId: requested.responseId, approvalId: approval.id, decision: "approve", arguments: "nope" });
    expect(await live.waitFor((f) => f.type === "error")).toMatchObject({ error: { code: "invalid_request" } });
    live.close();

    const second = await invokeApproval(app, member.apiKey, "echo console-asked >> c.txt");
    const bad = await trpc(operator.apiKey, "approvals.decide", { approvalId: second.approval.id, decision: "approve", bindingHash: "nope", arguments: { command: "echo x" } });
    expect(bad.status).toBe(409);
    const row = await approvalRow(second.approval.id);
    const good = await trpc(operator.apiKey, "approvals.decide", { approvalId: second.approval.id, decision: "approve", bindingHash: row?.bindingHash, arguments: { command: "echo console-edited >> c.txt" } });
    expect(good.status).toBe(200);
    expect(good.body.result?.data).toMatchObject({ edited: true, decision: "approve" });
    await app.api(`/v1/responses/${second.env.id}/events?sessionId=${second.env.sessionId}`, { key: member.apiKey }).then((r) => r.text());
    expect(readFileSync(join(second.cwd, "c.txt"), "utf8")).toBe("console-edited\n");
  });
});

describe(`reply instead (${testDbKind()})`, () => {
  it("a denial with a message reaches the agent as the tool's result; nothing ran; the run goes on", async () => {
    const { env, approval, cwd } = await invokeApproval(app, member.apiKey, "echo prod >> ran.txt", { followedBy: [{ text: "I will use staging." }] });
    const body = await ok200(await decideWith(operator.apiKey, approval.id, { decision: "deny", message: "  use the staging database instead  " }));
    expect(body).toMatchObject({ id: env.id, status: "completed", approvalId: approval.id, outputText: "I will use staging." });
    const [result] = toolResults(body);
    expect(result?.output).toMatchObject({ denied: true, reply: "use the staging database instead" });
    expect(lineCount(cwd, "ran.txt")).toBe(0);
    expect(await approvalRow(approval.id)).toMatchObject({ status: "denied", replyMessage: "use the staging database instead", decidedBy: operator.userId });
    const events = await eventsOf(env.id);
    expect(events.find((e) => e.type === "approval.resolved")?.data).toMatchObject({ decision: "deny", message: "use the staging database instead" });
    expect(events.find((e) => e.type === "response.tool_result")?.data).toMatchObject({ output: { reply: "use the staging database instead" } });
    await expectError(await decideWith(operator.apiKey, approval.id, { decision: "approve" }), 409, "already_decided");
  });

  it("a message with approve, an empty message or a too-long one is 400 and changes nothing", async () => {
    const { approval } = await invokeApproval(app, member.apiKey, "echo nothing");
    const counts = await tableCounts(app);
    await expectError(await decideWith(operator.apiKey, approval.id, { decision: "approve", message: "hi" }), 400, "invalid_request");
    await expectError(await decideWith(operator.apiKey, approval.id, { decision: "deny", message: "   " }), 400, "invalid_request");
    await expectError(await decideWith(operator.apiKey, approval.id, { decision: "deny", message: "x".repeat(4001) }), 400, "invalid_request");
    await expectError(await decideWith(operator.apiKey, approval.id, { decision: "deny", message: 7 }), 400, "invalid_request");
    await expectError(await decideWith(operator.apiKey, approval.id, { decision: "deny", note: "x" }), 400, "invalid_request");
    expect(await tableCounts(app)).toEqual(counts);
    expect((await approvalRow(approval.id))?.status).toBe("pending");
    // A plain denial still ends the response as before.
    expect(await (await decideWith(operator.apiKey, approval.id, { decision: "deny" })).json()).toEqual({ id: approval.id, status: "denied" });
  });

  it("a reply over the WebSocket continues the run on that socket", async () => {
    const live = await LiveClient.open(app, operator.apiKey);
    live.send({ type: "response.create", input: script([execTurn("echo never >> ws-reply.txt"), { text: "ok" }]) });
    const requested = await live.waitFor((f) => f.type === "approval.requested");
    const approval = (requested as unknown as { approval: { id: string; cwd: string } }).approval;
    live.send({ type: "approval.decision", responseId: requested.responseId, approvalId: approval.id, decision: "deny", message: "not today" });
    expect(await live.waitFor((f) => f.type === "approval.resolved")).toMatchObject({ decision: "deny", message: "not today" });
    expect(await live.waitFor((f) => f.type === "response.tool_result")).toMatchObject({ output: { denied: true, reply: "not today" } });
    const done = await live.waitFor((f) => f.type === "response.completed" && (f as unknown as { status: string }).status !== "requires_action");
    expect(done).toMatchObject({ status: "completed", outputText: "ok" });
    expect(lineCount(workspaceOf(app, requested.sessionId), "ws-reply.txt")).toBe(0);
    live.close();
  });
});

describe(`standing grants (${testDbKind()})`, () => {
  const runExec = (key: string, command: string, sessionId?: string) =>
    invoke(app, key, script([execTurn(command), { text: "done" }]), sessionId ? { sessionId } : {});

  it("a session grant runs the same operation without a prompt in that session only; other arguments still prompt", async () => {
    const { env, approval, cwd } = await invokeApproval(app, member.apiKey, "echo granted >> g.txt");
    const body = await ok200(await decideWith(operator.apiKey, approval.id, { decision: "approve", grant: "session" }));
    expect(body.status).toBe("completed");
    const grantId = (body as TBody & { grantId?: string }).grantId as string;
    expect(grantId).toMatch(/^grant_[0-9a-f]{32}$/);
    expect(await approvalRow(approval.id)).toMatchObject({ grantId });

    const again = await runExec(member.apiKey, "echo granted >> g.txt", env.sessionId);
    expect(again.status).toBe("completed");
    expect(lineCount(cwd, "g.txt")).toBe(2);
    const used = (await eventsOf(again.id)).find((e) => e.type === "grant.used");
    expect(used?.data).toMatchObject({ grantId, action: "tool:exec", scope: "session", uses: 1 });
    expect(await app.deps.db.select().from(approvals).where(eq(approvals.responseId, again.id))).toHaveLength(0);

    expect((await runExec(member.apiKey, "echo different >> g.txt", env.sessionId)).status).toBe("requires_action");
    expect((await runExec(member.apiKey, "echo granted >> g.txt")).status).toBe("requires_action");
    expect((await runExec(other.apiKey, "echo granted >> g.txt")).status).toBe("requires_action");
    expect(lineCount(cwd, "g.txt")).toBe(2);
  });

  it("a days grant applies across sessions until revoked; revocation stops the next use", async () => {
    const { approval } = await invokeApproval(app, member.apiKey, "echo days");
    const before = Date.now();
    const decided = await ok200(await decideWith(operator.apiKey, approval.id, { decision: "approve", grant: { days: 7 } }));
    const after = Date.now();
    const grantId = (decided as TBody & { grantId: string }).grantId;
    const [row] = await app.deps.db.select().from(grants).where(eq(grants.id, grantId));
    expect(row?.scope).toBe("days");
    // 7 days from the decision, made within the call (however long it took).
    expect(row?.expiresAt?.getTime()).toBeGreaterThanOrEqual(before + 7 * 86_400_000);
    expect(row?.expiresAt?.getTime()).toBeLessThanOrEqual(after + 7 * 86_400_000);

    expect((await runExec(member.apiKey, "echo days")).status).toBe("completed");
    expect((await runExec(member.apiKey, "echo days")).status).toBe("completed");
    const listed = (await (await app.api("/v1/grants", { key: member.apiKey })).json()) as { grants: Array<{ id: string; uses: number; status: string }> };
    expect(listed.grants.find((g) => g.id === grantId)).toMatchObject({ uses: 2, status: "active" });

    // Others cannot see it; an auditor sees it but cannot revoke it.
    await expectError(await app.api(`/v1/grants/${grantId}`, { key: other.apiKey, method: "DELETE" }), 404, "not_found");
    await expectError(await app.api(`/v1/grants/${grantId}`, { key: auditor.apiKey, method: "DELETE" }), 403, "forbidden");
    const revoked = await app.api(`/v1/grants/${grantId}`, { key: operator.apiKey, method: "DELETE" });
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ id: grantId, status: "revoked", revokedBy: operator.userId });
    await expectError(await app.api(`/v1/grants/${grantId}`, { key: member.apiKey, method: "DELETE" }), 409, "conflict");

    expect((await runExec(member.apiKey, "echo days")).status).toBe("requires_action");
    const all = (await (await app.api("/v1/grants?status=all", { key: member.apiKey })).json()) as { grants: Array<{ id: string; status: string; uses: number }> };
    expect(all.grants.find((g) => g.id === grantId)).toMatchObject({ status: "revoked", uses: 2 });
    const active = (await (await app.api("/v1/grants", { key: member.apiKey })).json()) as { grants: Array<{ id: string }> };
    expect(active.grants.some((g) => g.id === grantId)).toBe(false);
    const [origin] = await app.deps.db.select().from(approvals).where(eq(approvals.id, approval.id));
    expect((await eventsOf(origin?.responseId as string)).some((e) => e.type === "grant.revoked")).toBe(true);
  });

  it("an edited approval with a grant grants the edited operation", async () => {
    const { env, approval } = await invokeApproval(app, member.apiKey, "echo asked-grant");
    await ok200(await decideWith(operator.apiKey, approval.id, { decision: "approve", arguments: { command: "echo edited-grant" }, grant: "session" }));
    expect((await runExec(member.apiKey, "echo edited-grant", env.sessionId)).status).toBe("completed");
    expect((await runExec(member.apiKey, "echo asked-grant", env.sessionId)).status).toBe("requires_action");
  });

  it("bad grants get a clear error and change nothing", async () => {
    const { approval } = await invokeApproval(app, member.apiKey, "echo bad-grant");
    const counts = await tableCounts(app);
    for (const grant of ["forever", { days: 0 }, { days: 1.5 }, { days: "3" }, { weeks: 1 }, { days: 1, extra: true }, 3]) {
      await expectError(await decideWith(operator.apiKey, approval.id, { decision: "approve", grant }), 400, "invalid_request");
    }
    const tooLong = await expectError(await decideWith(operator.apiKey, approval.id, { decision: "approve", grant: { days: 31 } }), 422, "validation_failed");
    expect(tooLong.detail).toMatch(/at most 30 days/);
    await expectError(await decideWith(operator.apiKey, approval.id, { decision: "deny", grant: "session" }), 400, "invalid_request");
    expect(await tableCounts(app)).toEqual(counts);
    expect(await app.deps.db.select().from(grants).where(eq(grants.approvalId, approval.id))).toHaveLength(0);
    expect((await approvalRow(approval.id))?.status).toBe("pending");

    // An agent without grants refuses them.
    const res = await app.api("/v1/responses", { key: member.apiKey, body: { agent: "scripted-device", input: script([execTurn("echo no-grants")]) } });
    const env = (await res.json()) as TBody & { requiredAction: { id: string } };
    const refused = await expectError(await decideWith(operator.apiKey, env.requiredAction.id, { decision: "approve", grant: "session" }), 422, "validation_failed");
    expect(refused.detail).toMatch(/does not allow standing grants/);
    expect((await approvalRow(env.requiredAction.id))?.status).toBe("pending");
  });

  it("the console lists and revokes grants through tRPC with the same rules", async () => {
    const { approval } = await invokeApproval(app, member.apiKey, "echo console-grant");
    const decided = await ok200(await decideWith(operator.apiKey, approval.id, { decision: "approve", grant: { days: 1 } }));
    const grantId = (decided as TBody & { grantId: string }).grantId;
    const listed = await fetch(`${app.url}/api/trpc/grants.list`, { headers: { authorization: `Bearer ${auditor.apiKey}` } });
    const data = ((await listed.json()) as { result: { data: Array<{ id: string }> } }).result.data;
    expect(data.some((g) => g.id === grantId)).toBe(true);
    expect((await trpc(auditor.apiKey, "grants.revoke", { grantId })).status).toBe(403);
    expect((await trpc(operator.apiKey, "grants.revoke", { grantId })).status).toBe(200);
    expect((await trpc(operator.apiKey, "grants.revoke", { grantId })).status).toBe(409);
    expect((await runExec(member.apiKey, "echo console-grant")).status).toBe("requires_action");
  });
});
