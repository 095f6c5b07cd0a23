import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { approvals, clientToolRequests } from "../../db/schema";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, expectError, getResponse, invoke, invokeApproval, LiveClient, lineCount, ok200, script, tableCounts } from "./helpers";
import { signIn, trpcGet, trpcPost } from "./security-helpers";

let app: TTestApp;
let alice: TTestUser;
let bob: TTestUser;
let operator: TTestUser;
let auditor: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  [alice, bob, operator, auditor] = await Promise.all([app.user("member"), app.user("member"), app.user("operator"), app.user("auditor")]);
});
afterAll(async () => {
  await app?.close();
});

const UNAUTHENTICATED = { detail: "Authentication required", code: "unauthenticated" };

describe(`authentication (${testDbKind()})`, () => {
  it("healthz is public and names the database", async () => {
    const res = await app.api("/v1/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, database: testDbKind() });
  });

  it("no, bad, revoked or malformed credentials are 401 with the exact body on every route", async () => {
    const created = await invoke(app, alice.apiKey, "hello");
    const routes: Array<[string, string, unknown?]> = [
      ["POST", "/v1/responses", { input: "x" }],
      ["GET", `/v1/responses/${created.id}?sessionId=${created.sessionId}`],
      ["GET", `/v1/responses/${created.id}/events?sessionId=${created.sessionId}`],
      ["POST", `/v1/responses/${created.id}/cancel`],
      ["POST", "/v1/approvals/approval_x", { decision: "approve" }],
      ["POST", "/v1/client-tools/client_tool_x", { output: {} }],
    ];
    // The revoked key is revoked the way an admin does it: through the admin API.
    const revoked = await app.user("member");
    const admin = await app.user("admin");
    const keys = ((await trpcGet(app, { key: admin.apiKey }, "admin.apiKeys")).body as { result: { data: Array<{ id: string; userId: string }> } }).result.data;
    const revokedKey = keys.find((k) => k.userId === revoked.userId);
    expect((await trpcPost(app, { key: admin.apiKey }, "admin.revokeApiKey", { keyId: revokedKey?.id })).status).toBe(200);
    const before = await tableCounts(app);
    const variants: Array<Record<string, string>> = [
      {},
      { authorization: "Bearer cs_wrong" },
      { authorization: "Bearer not-even-a-prefix" },
      { authorization: `Basic ${Buffer.from("a:b").toString("base64")}` },
      { authorization: `Bearer ${alice.apiKey} extra` },
      { authorization: `Bearer ${revoked.apiKey}` },
      { cookie: "better-auth.session_token=forged" },
    ];
    for (const headers of variants) {
      for (const [method, path, body] of routes) {
        const res = await app.api(path, { method, body, headers });
        expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(await res.json()).toEqual(UNAUTHENTICATED);
      }
    }
    expect(await tableCounts(app)).toEqual(before);
  });

  it("?access_token= works where headers cannot be set, and a bad one is 401", async () => {
    const created = await invoke(app, alice.apiKey, "hello");
    const ok = await app.api(`/v1/responses/${created.id}?sessionId=${created.sessionId}&access_token=${encodeURIComponent(alice.apiKey)}`);
    expect((await ok200(ok)).status).toBe("completed");
    const bad = await app.api(`/v1/responses/${created.id}?sessionId=${created.sessionId}&access_token=cs_nope`);
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual(UNAUTHENTICATED);
  });
});

describe(`console session cookie (${testDbKind()})`, () => {
  // The cookie's origin checks, on /v1 and on /v1/live, are security-web.test.ts's.
  it("a signed-in console cookie is accepted on /v1: it starts a run and reads it", async () => {
    const cookie = await signIn(app, alice);
    const created = await ok200(await app.api("/v1/responses", { body: { input: "cookie" }, headers: { cookie, origin: app.url } }));
    expect(created.status).toBe("completed");
    expect((await ok200(await app.api(`/v1/responses/${created.id}?sessionId=${created.sessionId}`, { headers: { cookie } }))).outputText).toBe("You said: cookie");
  });
});

describe(`scoping (${testDbKind()})`, () => {
  it("another member's response, session, approval and client-tool request look missing (404)", async () => {
    const { env, approval, cwd } = await invokeApproval(app, alice.apiKey, "echo x >> count.txt");
    await expectError(await getResponse(app, bob.apiKey, env.id, env.sessionId), 404, "not_found");
    await expectError(await app.api(`/v1/responses/${env.id}/events?sessionId=${env.sessionId}`, { key: bob.apiKey }), 404, "not_found");
    await expectError(await app.api(`/v1/responses/${env.id}/cancel`, { key: bob.apiKey, method: "POST" }), 404, "not_found");
    await expectError(await decide(app, bob.apiKey, approval.id, "approve"), 404, "not_found");
    await expectError(await decide(app, bob.apiKey, approval.id, "deny"), 404, "not_found");
    const before = await tableCounts(app);
    await expectError(await app.api("/v1/responses", { key: bob.apiKey, body: { input: "hi", sessionId: env.sessionId } }), 404, "not_found");
    expect(await tableCounts(app)).toEqual(before);
    // Not even the owner can read it through the wrong session.
    const other = await invoke(app, alice.apiKey, "other session");
    await expectError(await getResponse(app, alice.apiKey, env.id, other.sessionId), 404, "not_found");

    const ct = await invoke(app, alice.apiKey, script([{ toolCalls: [{ name: "get_page_context" }] }]));
    await expectError(await app.api(`/v1/client-tools/${ct.requiredAction?.id}`, { key: bob.apiKey, body: { output: { url: "u", title: "t" } } }), 404, "not_found");

    // Over the socket too.
    const live = await LiveClient.open(app, bob.apiKey);
    try {
      live.send({ type: "approval.decision", responseId: env.id, approvalId: approval.id, decision: "approve" });
      expect((await live.waitFor((f) => f.type === "error")).code).toBe("not_found");
      live.send({ type: "client_tool.result", requestId: ct.requiredAction?.id, output: { url: "u", title: "t" } });
      expect((await live.waitFor((f) => f.type === "error" && f.requestId === ct.requiredAction?.id)).code).toBe("not_found");
      live.send({ type: "response.cancel", responseId: env.id });
      expect((await live.waitForCount((f) => f.type === "error", 3))[2]?.code).toBe("not_found");
    } finally {
      live.close();
    }

    const [row] = await app.deps.db.select().from(approvals).where(eq(approvals.id, approval.id));
    expect(row?.status).toBe("pending");
    const [request] = await app.deps.db.select().from(clientToolRequests).where(eq(clientToolRequests.id, ct.requiredAction?.id as string));
    expect(request?.status).toBe("pending");
    expect((await ok200(await getResponse(app, alice.apiKey, env.id, env.sessionId))).status).toBe("requires_action");
    expect(lineCount(cwd, "count.txt")).toBe(0);
  });

  it("an operator may decide a member's approval; the trajectory records who did", async () => {
    const { env, approval, cwd } = await invokeApproval(app, alice.apiKey, "echo x >> count.txt");
    const done = await ok200(await decide(app, operator.apiKey, approval.id, "approve"));
    expect(done).toMatchObject({ id: env.id, status: "completed", approvalId: approval.id });
    expect(lineCount(cwd, "count.txt")).toBe(1);
    const [row] = await app.deps.db.select().from(approvals).where(eq(approvals.id, approval.id));
    expect(row).toMatchObject({ status: "approved", decidedBy: operator.userId, decidedVia: "http" });
    // Reading a response is one check on every transport: an operator reads the member's response over /v1 too.
    expect((await ok200(await getResponse(app, operator.apiKey, env.id, env.sessionId))).status).toBe("completed");
  });

  it("an operator may deny a member's approval", async () => {
    const { env, approval } = await invokeApproval(app, alice.apiKey, "echo x >> count.txt");
    const res = await decide(app, operator.apiKey, approval.id, "deny");
    expect(await ok200(res)).toEqual({ id: approval.id, status: "denied" });
    expect((await ok200(await getResponse(app, alice.apiKey, env.id, env.sessionId))).status).toBe("denied");
  });

  it("an auditor deciding is 403 and the approval stays pending; auditors cannot invoke", async () => {
    const { env, approval, cwd } = await invokeApproval(app, alice.apiKey, "echo x >> count.txt");
    await expectError(await decide(app, auditor.apiKey, approval.id, "approve"), 403, "forbidden");
    await expectError(await decide(app, auditor.apiKey, approval.id, "deny"), 403, "forbidden");
    await expectError(await app.api(`/v1/responses/${env.id}/cancel`, { key: auditor.apiKey, method: "POST" }), 403, "forbidden");
    const live = await LiveClient.open(app, auditor.apiKey);
    try {
      live.send({ type: "approval.decision", responseId: env.id, approvalId: approval.id, decision: "approve" });
      expect((await live.waitFor((f) => f.type === "error")).code).toBe("forbidden");
    } finally {
      live.close();
    }
    const [row] = await app.deps.db.select().from(approvals).where(eq(approvals.id, approval.id));
    expect(row?.status).toBe("pending");
    expect(lineCount(cwd, "count.txt")).toBe(0);
    const before = await tableCounts(app);
    await expectError(await app.api("/v1/responses", { key: auditor.apiKey, body: { input: "hi" } }), 403, "forbidden");
    expect(await tableCounts(app)).toEqual(before);
    // An operator can still decide it (the owner, a member, may not decide its own run's approvals).
    expect((await ok200(await decide(app, operator.apiKey, approval.id, "approve"))).status).toBe("completed");
  });

  it("a private client-tool request can be submitted only by its own user", async () => {
    const env = await invoke(app, alice.apiKey, script([{ toolCalls: [{ name: "collect_card_details" }] }]));
    const id = env.requiredAction?.id as string;
    const card = { number: "4111111111111111", expiry: "12/29", name: "Ada" };
    await expectError(await app.api(`/v1/client-tools/${id}`, { key: operator.apiKey, body: { output: card } }), 403, "forbidden");
    await expectError(await app.api(`/v1/client-tools/${id}`, { key: bob.apiKey, body: { output: card } }), 404, "not_found");
    expect((await ok200(await app.api(`/v1/client-tools/${id}`, { key: alice.apiKey, body: { output: card } }))).status).toBe("completed");
  });
});
