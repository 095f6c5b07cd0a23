import { existsSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testDbKind } from "../../db/testing";
import { approvals, clientToolRequests } from "../../db/schema";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import {
  decide,
  expectError,
  expectHealthy,
  getResponse,
  invoke,
  invokeApproval,
  LiveClient,
  lineCount,
  ok200,
  script,
  waitUntil,
} from "./helpers";

let app: TTestApp;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  // Starts runs and decides them: an operator may approve its own (separation of duties is tested elsewhere).
  operator = await app.user("operator");
});
afterAll(async () => {
  await app?.close();
});

const approvalStatus = async (id: string) => (await app.deps.db.select().from(approvals).where(eq(approvals.id, id)))[0]?.status;

describe(`rule 1: an approval is bound to the exact operation (${testDbKind()})`, () => {
  it("rejects an approval whose stored arguments were tampered with, and never runs either command", async () => {
    const { env, approval, cwd } = await invokeApproval(app, operator.apiKey, "echo ran > side.txt");
    await app.deps.db.update(approvals).set({ arguments: { command: "echo pwned > pwned.txt" } }).where(eq(approvals.id, approval.id));

    // Watched at the spawner: a refused decision starts no attempt and asks for no command (so nothing
    // can land after the file checks below).
    const spawned = vi.spyOn(app.deps.sandbox.spawner, "run");
    try {
      await expectError(await decide(app, operator.apiKey, approval.id, "approve"), 409, "binding_changed");

      expect(await approvalStatus(approval.id)).toBe("pending");
      const current = await ok200(await getResponse(app, operator.apiKey, env.id, env.sessionId));
      expect(current.status).toBe("requires_action");
      expect(app.deps.host.isLocal(env.id)).toBe(false);
      expect(spawned).not.toHaveBeenCalled();
    } finally {
      spawned.mockRestore();
    }
    expect(existsSync(join(cwd, "side.txt"))).toBe(false);
    expect(existsSync(join(cwd, "pwned.txt"))).toBe(false);
  });

  it("rejects an approval whose working directory was tampered with", async () => {
    const { approval, cwd } = await invokeApproval(app, operator.apiKey, "echo ran > side.txt");
    await app.deps.db.update(approvals).set({ cwd: "/tmp" }).where(eq(approvals.id, approval.id));
    await expectError(await decide(app, operator.apiKey, approval.id, "approve"), 409, "binding_changed");
    expect(await approvalStatus(approval.id)).toBe("pending");
    expect(existsSync(join(cwd, "side.txt"))).toBe(false);
  });

  it("a tampered approval is rejected over the WebSocket too", async () => {
    const { env, approval, cwd } = await invokeApproval(app, operator.apiKey, "echo ran > side.txt");
    await app.deps.db.update(approvals).set({ arguments: { command: "echo ran > side.txt", timeoutMs: 5 } }).where(eq(approvals.id, approval.id));
    const live = await LiveClient.open(app, operator.apiKey);
    try {
      live.send({ type: "approval.decision", responseId: env.id, approvalId: approval.id, decision: "approve" });
      const error = await live.waitFor((f) => f.type === "error");
      expect(error).toMatchObject({ code: "binding_changed", responseId: env.id });
      expect(live.isOpen).toBe(true);
    } finally {
      live.close();
    }
    expect(await approvalStatus(approval.id)).toBe("pending");
    expect(existsSync(join(cwd, "side.txt"))).toBe(false);
  });

  it("a WebSocket decision naming another response gets binding_changed; the approval stays pending and can be decided", async () => {
    const a = await invokeApproval(app, operator.apiKey, "echo a >> count.txt");
    const b = await invokeApproval(app, operator.apiKey, "echo b >> count.txt");
    const live = await LiveClient.open(app, operator.apiKey);
    try {
      live.send({ type: "approval.decision", responseId: b.env.id, approvalId: a.approval.id, decision: "approve" });
      const error = await live.waitFor((f) => f.type === "error");
      expect(error.code).toBe("binding_changed");
      expect(live.isOpen).toBe(true);
      expect(await approvalStatus(a.approval.id)).toBe("pending");
      expect(await approvalStatus(b.approval.id)).toBe("pending");
      expect(lineCount(a.cwd, "count.txt")).toBe(0);

      live.send({ type: "approval.decision", responseId: a.env.id, approvalId: a.approval.id, decision: "approve" });
      const resolved = await live.waitFor((f) => f.type === "approval.resolved");
      expect(resolved).toMatchObject({ responseId: a.env.id, approvalId: a.approval.id, decision: "approve" });
      const done = await live.waitFor((f) => f.type === "response.completed" && f.responseId === a.env.id);
      expect(done.status).toBe("completed");
      expect(lineCount(a.cwd, "count.txt")).toBe(1);
      // b is untouched and still decidable over HTTP.
      const bDone = await ok200(await decide(app, operator.apiKey, b.approval.id, "approve"));
      expect(bDone.status).toBe("completed");
      expect(lineCount(b.cwd, "count.txt")).toBe(1);
    } finally {
      live.close();
    }
  });
});

describe(`rule 2: a decision is consumed exactly once (${testDbKind()})`, () => {
  it("20 concurrent approvals over HTTP and several sockets: one wins, the rest get already_decided, the command runs once", async () => {
    const { env, approval, cwd } = await invokeApproval(app, operator.apiKey, "echo x >> count.txt", { followedBy: [{ text: "after" }] });
    const sockets = await Promise.all([1, 2, 3, 4].map(() => LiveClient.open(app, operator.apiKey)));
    try {
      const frame = { type: "approval.decision", responseId: env.id, approvalId: approval.id, decision: "approve" };
      const http: Array<Promise<Response>> = [];
      // 12 HTTP calls and 8 WebSocket frames (2 per socket), interleaved.
      for (let i = 0; i < 20; i++) {
        if (i % 5 === 1 || i % 5 === 3) sockets[Math.floor(i / 5)]?.send(frame);
        else http.push(decide(app, operator.apiKey, approval.id, "approve"));
      }
      expect(http).toHaveLength(12);
      const responses = await Promise.all(http);
      const bodies = await Promise.all(responses.map(async (r) => ({ status: r.status, text: await r.text() })));
      const isOutcome = (f: { type: string; approvalId?: unknown; responseId?: string }) =>
        (f.type === "approval.resolved" && f.approvalId === approval.id) || (f.type === "error" && f.responseId === env.id);
      await Promise.all(sockets.map((s) => s.waitForCount(isOutcome, 2)));

      const httpWins = bodies.filter((b) => b.status === 200);
      const httpLosses = bodies.filter((b) => b.status !== 200);
      const wsWins = sockets.flatMap((s) => s.frames.filter((f) => f.type === "approval.resolved"));
      const wsErrors = sockets.flatMap((s) => s.frames.filter((f) => f.type === "error"));
      expect(httpWins.length + wsWins.length).toBe(1);
      expect(httpLosses.length + wsErrors.length).toBe(19);
      for (const loss of httpLosses) {
        expect(loss.status).toBe(409);
        expect(JSON.parse(loss.text)).toEqual({ detail: expect.any(String), code: "already_decided" });
      }
      for (const e of wsErrors) expect(e.code).toBe("already_decided");
      if (httpWins[0]) {
        const won = JSON.parse(httpWins[0].text);
        expect(won).toMatchObject({ id: env.id, status: "completed", approvalId: approval.id, outputText: "after" });
      } else {
        expect(wsWins[0]).toMatchObject({ responseId: env.id, decision: "approve" });
      }
      // Every socket (winner or losers) is still usable.
      for (const s of sockets) {
        expect(s.isOpen).toBe(true);
        s.send({ type: "response.cancel", responseId: "resp_nope" });
        await s.waitFor((f) => f.type === "error" && f.responseId === "resp_nope");
      }
      const done = await waitUntil(async () => {
        const body = await ok200(await getResponse(app, operator.apiKey, env.id, env.sessionId));
        return body.status === "completed" ? body : null;
      });
      expect(done.outputText).toBe("after");
      expect(lineCount(cwd, "count.txt")).toBe(1);
      const [row] = await app.deps.db.select().from(approvals).where(eq(approvals.id, approval.id));
      expect(row).toMatchObject({ status: "approved", decidedBy: operator.userId, decidedVia: httpWins.length === 1 ? "http" : "websocket" });
      const results = done.output.filter((i) => i.type === "tool_result");
      expect(results).toHaveLength(1);
    } finally {
      for (const s of sockets) s.close();
    }
    await expectHealthy(app);
  });

  it("20 concurrent client-tool results over HTTP and sockets: one 200, the rest already_submitted", async () => {
    const env = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "get_page_context" }] }, { text: "thanks" }]));
    expect(env.status).toBe("requires_action");
    const requestId = env.requiredAction?.id as string;
    expect(requestId).toMatch(/^client_tool_[0-9a-f]{32}$/);
    const sockets = await Promise.all([1, 2].map(() => LiveClient.open(app, operator.apiKey)));
    try {
      const http: Array<Promise<Response>> = [];
      for (let i = 0; i < 20; i++) {
        const output = { url: `https://example.test/${i}`, title: `page ${i}` };
        // 16 HTTP calls and 4 WebSocket frames (2 per socket), interleaved.
        if (i % 10 === 4 || i % 10 === 8) sockets[Math.floor(i / 10)]?.send({ type: "client_tool.result", requestId, output });
        else http.push(app.api(`/v1/client-tools/${requestId}`, { key: operator.apiKey, body: { output } }));
      }
      const bodies = await Promise.all((await Promise.all(http)).map(async (r) => ({ status: r.status, text: await r.text() })));
      const isOutcome = (f: { type: string; responseId?: string; requestId?: string }) =>
        (f.type === "response.tool_result" && f.responseId === env.id) || (f.type === "error" && f.requestId === requestId);
      // Each socket sent two results: a winner sees the tool_result and one error, a loser two errors.
      await Promise.all(sockets.map((s) => s.waitForCount(isOutcome, 2)));
      const wsWins = sockets.filter((s) => s.frames.some((f) => f.type === "response.tool_result"));
      const wsErrors = sockets.flatMap((s) => s.frames.filter((f) => f.type === "error"));
      const httpWins = bodies.filter((b) => b.status === 200);
      expect(httpWins.length + wsWins.length).toBe(1);
      expect(bodies.length - httpWins.length + wsErrors.length).toBe(19);
      for (const loss of bodies.filter((b) => b.status !== 200)) {
        expect(loss.status).toBe(409);
        expect(JSON.parse(loss.text)).toEqual({ detail: expect.any(String), code: "already_submitted" });
      }
      for (const e of wsErrors) expect(e.code).toBe("already_submitted");
      if (httpWins[0]) expect(JSON.parse(httpWins[0].text)).toMatchObject({ id: env.id, status: "completed", clientToolId: requestId });

      const done = await waitUntil(async () => {
        const body = await ok200(await getResponse(app, operator.apiKey, env.id, env.sessionId));
        return body.status === "completed" ? body : null;
      });
      const results = done.output.filter((i) => i.type === "tool_result");
      expect(results).toHaveLength(1);
      const [request] = await app.deps.db.select().from(clientToolRequests).where(eq(clientToolRequests.id, requestId));
      expect(request?.status).toBe("submitted");
      expect((results[0] as { output: unknown }).output).toEqual(request?.publicOutput);
    } finally {
      for (const s of sockets) s.close();
    }
  });

  it("a second decision after the first completed is 409 already_decided", async () => {
    const { approval, cwd } = await invokeApproval(app, operator.apiKey, "echo x >> count.txt");
    await ok200(await decide(app, operator.apiKey, approval.id, "approve"));
    await expectError(await decide(app, operator.apiKey, approval.id, "approve"), 409, "already_decided");
    await expectError(await decide(app, operator.apiKey, approval.id, "deny"), 409, "already_decided");
    expect(lineCount(cwd, "count.txt")).toBe(1);
  });
});
