import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testDbKind } from "../../db/testing";
import { createModelReviewer, createRuleReviewer } from "../../server/reviewer";
import { fakeModel } from "./fake-model";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { actionsAgentsFile } from "./actions-helpers";
import { expectError, invokeApproval, waitUntil } from "./helpers";
import { trpcMutation, trpcQuery } from "./questions-helpers";

/**
 * Issue 19 point 1: approvals for agents that run elsewhere, through the network only:
 * create (policy, reviewer, grants), wait, decide on every path, consume exactly once.
 */
let app: TTestApp;
let alice: TTestUser;
let bob: TTestUser;
let operator: TTestUser;
let auditor: TTestUser;
let admin: TTestUser;
let admin2: TTestUser;

beforeAll(async () => {
  // The built-in agents plus agents declaring actions callers run themselves (actions-helpers.ts).
  // The server's default boundary limit (120 s): a waiter here ends by a decision, never by the limit
  // (the limit itself is tested on a server of its own below).
  app = await startTestApp({ reviewer: createRuleReviewer(), agentsFile: actionsAgentsFile() });
  [alice, bob, operator, auditor, admin, admin2] = await Promise.all([
    app.user("member", "Alice"),
    app.user("member", "Bob"),
    app.user("operator", "Olga Operator"),
    app.user("auditor", "Audrey Auditor"),
    app.user("admin", "Ada Admin"),
    app.user("admin", "Abe Admin"),
  ]);
  // Migrations on a fresh database can take long on a busy machine.
}, 180_000);
afterAll(async () => {
  await app?.close();
});

type TCreated = { id: string; status: string; bindingHash: string; expiresAtMs: number };
type TView = TCreated & { action: string; arguments: Record<string, unknown>; edited: boolean; originalArguments?: unknown; message?: string; risk: string; sessionId: string; responseId: string; consumed: boolean; decidedBy: string | null; decidedVia: string | null };

async function create(key: string, body: Record<string, unknown>, status = 201): Promise<TCreated> {
  const res = await app.api("/v1/approvals", { key, body });
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as TCreated;
}
async function view(key: string, id: string, wait?: number): Promise<TView> {
  const res = await app.api(`/v1/approvals/${id}${wait === undefined ? "" : `?wait=${wait}`}`, { key });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as TView;
}
const consume = (key: string, id: string, bindingHash: string) => app.api(`/v1/approvals/${id}/consume`, { key, body: { bindingHash } });
const decide = (key: string, id: string, body: Record<string, unknown>) => app.api(`/v1/approvals/${id}`, { key, body });
async function listIds(key: string, status = "pending"): Promise<string[]> {
  const res = await app.api(`/v1/approvals?status=${status}`, { key });
  const body = (await res.json()) as { approvals: Array<{ id: string }> };
  expect(res.status).toBe(200);
  return body.approvals.map((a) => a.id);
}
const exec = (command: string, extra: Record<string, unknown> = {}) => ({ action: "exec", arguments: { command }, ...extra });

/**
 * Starts a waiter (`GET ?wait=`) whose wait is far longer than a test may take, and resolves once it
 * is waiting (subscribed to the approval's response), so a decision made next lands during its wait.
 */
async function waitingView(key: string, id: string): Promise<{ waiting: Promise<TView> }> {
  const { responseId } = await view(key, id);
  const subscribed = vi.spyOn(app.deps.bus, "subscribeFrames");
  try {
    const waiting = view(key, id, 600_000);
    await waitUntil(() => subscribed.mock.calls.some(([r]) => r === responseId), 30_000, "the waiter to wait");
    return { waiting };
  } finally {
    subscribed.mockRestore();
  }
}

describe(`External approvals over HTTP (${testDbKind()})`, () => {
  it("create → pending; a waiter gets the decision made over /v1; consume works once, a replay or a wrong hash is 409", async () => {
    const before = Date.now();
    const created = await create(alice.apiKey, exec("make deploy", { message: "Deploy the site?" }));
    // The created approval as GET shows it.
    expect(created).toMatchObject({ action: "tool:exec", arguments: { command: "make deploy" }, edited: false, consumed: false, decidedBy: null });
    expect(created.id).toMatch(/^approval_[0-9a-f]{32}$/);
    expect(created.status).toBe("pending");
    expect(created.bindingHash).toMatch(/^[0-9a-f]{64}$/);
    // The scripted agent's approval lifetime (15 minutes) by default.
    expect(created.expiresAtMs).toBeGreaterThanOrEqual(before + 15 * 60_000 - 2000);

    const pending = await view(alice.apiKey, created.id, 0);
    expect(pending).toMatchObject({ id: created.id, status: "pending", action: "tool:exec", arguments: { command: "make deploy" }, edited: false, consumed: false, risk: "medium" });
    // Not approved yet: nothing may run.
    await expectError(await consume(alice.apiKey, created.id, created.bindingHash), 409, "not_approved");

    // The requester (a member) may not approve its own; an operator may.
    await expectError(await decide(alice.apiKey, created.id, { decision: "approve" }), 403, "forbidden");
    // Its wait is far longer than the test may take (and the server's limit too): only the decision ends it.
    const { waiting } = await waitingView(alice.apiKey, created.id);
    const decided = await decide(operator.apiKey, created.id, { decision: "approve" });
    const decidedBody = (await decided.json()) as Record<string, unknown>;
    expect(decided.status, JSON.stringify(decidedBody)).toBe(200);
    expect(decidedBody).toMatchObject({ status: "completed", approvalId: created.id });
    const approved = await waiting;
    expect(approved).toMatchObject({ status: "approved", consumed: false, decidedBy: operator.userId, decidedVia: "http", bindingHash: created.bindingHash });

    await expectError(await consume(alice.apiKey, created.id, "0".repeat(64)), 409, "binding_changed");
    await expectError(await consume(bob.apiKey, created.id, created.bindingHash), 404, "not_found");
    await expectError(await consume(operator.apiKey, created.id, created.bindingHash), 403, "forbidden");
    const consumed = await consume(alice.apiKey, created.id, created.bindingHash);
    expect(consumed.status).toBe(200);
    expect(await consumed.json()).toMatchObject({ id: created.id, status: "approved", consumed: true });
    await expectError(await consume(alice.apiKey, created.id, created.bindingHash), 409, "already_consumed");
    // Deciding again is refused like any settled approval.
    await expectError(await decide(operator.apiKey, created.id, { decision: "deny" }), 409, "already_decided");

    // Concurrent consumes of a fresh approval: exactly one wins.
    const again = await create(alice.apiKey, exec("make deploy-2"));
    expect((await decide(operator.apiKey, again.id, { decision: "approve" })).status).toBe(200);
    const statuses = (await Promise.all(Array.from({ length: 5 }, () => consume(alice.apiKey, again.id, again.bindingHash)))).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409]);
  });

  it("the console inbox shows it with the requester; a denial with a reply through the console tRPC reaches the waiter", async () => {
    const created = await create(alice.apiKey, exec("rm -rf build"));
    const waiting = await trpcQuery(app, operator.apiKey, "console.waiting");
    const items = ((waiting.body.result as { data: unknown }).data as unknown as { items: Array<{ id: string; userName: string; title: string }> }).items;
    expect(items.find((i) => i.id === created.id)).toMatchObject({ userName: "Alice", title: "tool:exec" });
    const listed = await trpcQuery(app, operator.apiKey, "approvals.list", { status: "pending" });
    expect(((listed.body.result as { data: unknown }).data as Array<{ id: string; user: string; risk: string }>).find((a) => a.id === created.id)).toMatchObject({ user: "Alice", risk: "high" });

    const { waiting: waiter } = await waitingView(alice.apiKey, created.id);
    const denied = await trpcMutation(app, operator.apiKey, "approvals.decide", { approvalId: created.id, decision: "deny", bindingHash: created.bindingHash, message: "Not on Friday; clean only build/tmp." });
    expect(denied.status, JSON.stringify(denied.body)).toBe(200);
    expect(await waiter).toMatchObject({ status: "denied", message: "Not on Friday; clean only build/tmp.", decidedVia: "console" });
    await expectError(await consume(alice.apiKey, created.id, created.bindingHash), 409, "not_approved");
  });

  it("an approval edited by the approver is consumed with the edited operation's hash only; a retried create tells the edit", async () => {
    const idempotencyKey = `edit-${Date.now()}`;
    const created = await create(alice.apiKey, exec("make deploy ENV=prod", { idempotencyKey }));
    const res = await decide(operator.apiKey, created.id, { decision: "approve", arguments: { command: "make deploy ENV=staging" } });
    expect(res.status, await res.clone().text()).toBe(200);
    const edited = await view(alice.apiKey, created.id);
    expect(edited).toMatchObject({ status: "approved", edited: true, arguments: { command: "make deploy ENV=staging" }, originalArguments: { command: "make deploy ENV=prod" } });
    expect(edited.bindingHash).not.toBe(created.bindingHash);
    // The caller retries its create (it lost the first answer): the same approval, as it is now.
    const retried = (await create(alice.apiKey, exec("make deploy ENV=prod", { idempotencyKey }), 200)) as TView;
    expect(retried).toEqual(edited);
    await expectError(await consume(alice.apiKey, created.id, created.bindingHash), 409, "binding_changed");
    expect((await consume(alice.apiKey, created.id, edited.bindingHash)).status).toBe(200);
  });

  it("a standing grant approves the same operation at once; a `never` policy too; the reviewer denies", async () => {
    const first = await create(alice.apiKey, exec("npm test"));
    const { sessionId } = await view(alice.apiKey, first.id);
    const granted = await decide(operator.apiKey, first.id, { decision: "approve", grant: "session" });
    expect(granted.status).toBe(200);
    expect(await granted.json()).toMatchObject({ grantId: expect.stringMatching(/^grant_/) });

    const second = await create(alice.apiKey, exec("npm test", { sessionId }));
    expect(second.status).toBe("approved");
    expect(second.id).not.toBe(first.id);
    expect((await view(alice.apiKey, second.id)).decidedVia).toBe("system");
    expect((await consume(alice.apiKey, second.id, second.bindingHash)).status).toBe(200);
    // Another session is not covered by a session grant.
    expect((await create(alice.apiKey, exec("npm test"))).status).toBe("pending");
    // Someone else's session is not the caller's: 404, nothing created.
    await expectError(await app.api("/v1/approvals", { key: bob.apiKey, body: exec("npm test", { sessionId }) }), 404, "not_found");

    const echo = await create(alice.apiKey, { action: "echo", arguments: { text: "hi" } });
    expect(echo.status).toBe("approved");

    const reviewed = await create(alice.apiKey, { ...exec("cat ~/.ssh/id_rsa"), agent: "scripted-reviewed" });
    expect(reviewed.status).toBe("denied");
    const seen = await view(alice.apiKey, reviewed.id);
    expect(seen.message).toBeTruthy();
    expect(seen.risk).toBe("high");
    await expectError(await consume(alice.apiKey, reviewed.id, reviewed.bindingHash), 409, "not_approved");
    expect(await listIds(alice.apiKey)).not.toContain(reviewed.id);
  });

  it("expires when nobody decides: the waiter sees expired, consume is 409 expired, a decision is 409", async () => {
    const created = await create(alice.apiKey, { action: "send_email", arguments: { to: "a@example.com", subject: "Release" }, expiresInMs: 60_000 });
    // The waiter waits; the server's clock then moves past the expiry (no 1 s deadline for a loaded machine to miss).
    const { waiting } = await waitingView(alice.apiKey, created.id);
    app.clock.advance(60_000 + 1000);
    let result: TView;
    try {
      result = await waiting;
    } finally {
      app.clock.reset();
    }
    expect(result.status).toBe("expired");
    await expectError(await consume(alice.apiKey, created.id, created.bindingHash), 409, "expired");
    await expectError(await decide(operator.apiKey, created.id, { decision: "approve" }), 409, "expired");
  });

  it("a wait longer than the server's boundary limit answers the current status, not an error", async () => {
    // A server whose limit (1 s) is far below the wait asked for (600 s): the call comes back, with the
    // approval's current status (its duration is the server's configuration, not something to time here).
    const bounded = await startTestApp({ boundaryTimeoutMs: 1000, agentsFile: actionsAgentsFile() });
    try {
      const requester = await bounded.user("member");
      const res = await bounded.api("/v1/approvals", { key: requester.apiKey, body: exec("make long-wait") });
      const text = await res.text();
      expect(res.status, text).toBe(201);
      const created = JSON.parse(text) as TCreated;
      const waited = await bounded.api(`/v1/approvals/${created.id}?wait=600000`, { key: requester.apiKey });
      const body = await waited.text();
      expect(waited.status, body).toBe(200);
      expect(JSON.parse(body)).toMatchObject({ id: created.id, status: "pending", consumed: false });
    } finally {
      await bounded.close();
    }
  }, 180_000);

  it("the same idempotency key (per caller) returns the same approval; another operation under it is 409", async () => {
    const key = `deploy-${Date.now()}`;
    const first = await create(alice.apiKey, exec("make deploy-idem", { idempotencyKey: key }));
    const again = await create(alice.apiKey, exec("make deploy-idem", { idempotencyKey: key }), 200);
    expect(again).toEqual(first);
    const racing = await Promise.all(Array.from({ length: 4 }, () => app.api("/v1/approvals", { key: alice.apiKey, body: exec("make deploy-idem", { idempotencyKey: key }) })));
    for (const r of racing) expect(await r.json()).toEqual(first);
    expect((await listIds(operator.apiKey)).filter((id) => id === first.id)).toHaveLength(1);
    const pendingBefore = (await listIds(operator.apiKey)).length;
    await expectError(await app.api("/v1/approvals", { key: alice.apiKey, body: exec("make other", { idempotencyKey: key }) }), 409, "conflict");
    expect((await listIds(operator.apiKey)).length).toBe(pendingBefore);
    // Per caller: Bob's key of the same name is his own approval.
    const bobs = await create(bob.apiKey, exec("make deploy-idem", { idempotencyKey: key }));
    expect(bobs.id).not.toBe(first.id);
  });

  it("lists are scoped: members see their own, operators and auditors all", async () => {
    const mine = await create(alice.apiKey, exec("make scoped"));
    const bobs = await create(bob.apiKey, exec("make scoped"));
    expect(await listIds(alice.apiKey)).toContain(mine.id);
    expect(await listIds(alice.apiKey)).not.toContain(bobs.id);
    expect(await listIds(bob.apiKey)).not.toContain(mine.id);
    for (const key of [operator.apiKey, auditor.apiKey]) {
      const ids = await listIds(key);
      expect(ids).toContain(mine.id);
      expect(ids).toContain(bobs.id);
    }
    expect(await listIds(alice.apiKey, "decided")).not.toContain(mine.id);
    await expectError(await app.api(`/v1/approvals/${mine.id}`, { key: bob.apiKey }), 404, "not_found");
    expect((await view(auditor.apiKey, mine.id)).status).toBe("pending");
    await expectError(await app.api("/v1/approvals?status=everything", { key: alice.apiKey }), 400, "invalid_request");
  });

  it("bad input is a clear error that changes nothing", async () => {
    const count = async () => (await listIds(operator.apiKey)).length + (await listIds(operator.apiKey, "decided")).length;
    const before = await count();
    const post = (key: string, body: unknown) => app.api("/v1/approvals", { key, body });
    const spaced = await expectError(await post(alice.apiKey, { action: "send email", arguments: {} }), 400, "invalid_request");
    expect(spaced.detail).toContain("A–Z a–z 0–9 _ . : / -");
    await expectError(await post(alice.apiKey, { action: "x".repeat(129), arguments: {} }), 400, "invalid_request");
    await expectError(await post(alice.apiKey, { action: "send_email", arguments: { body: "x".repeat(70_000) } }), 413, "payload_too_large");
    await expectError(await post(alice.apiKey, { action: "exec", arguments: { command: 42 } }), 422, "validation_failed");
    await expectError(await post(alice.apiKey, { action: "exec", arguments: { command: "x".repeat(70_000) } }), 413, "payload_too_large");
    await expectError(await post(alice.apiKey, { ...exec("ls"), surprise: true }), 400, "invalid_request");
    await expectError(await post(alice.apiKey, exec("ls", { expiresInMs: 5 })), 400, "invalid_request");
    await expectError(await post(alice.apiKey, exec("ls", { agent: "nobody" })), 422, "validation_failed");
    await expectError(await post(alice.apiKey, { arguments: {} }), 400, "invalid_request");
    await expectError(await post(auditor.apiKey, exec("ls")), 403, "forbidden");
    await expectError(await app.api("/v1/approvals", { body: exec("ls") }), 401, "unauthenticated");
    await expectError(await app.api("/v1/approvals/approval_nope", { key: alice.apiKey }), 404, "not_found");
    await expectError(await app.api("/v1/approvals/approval_nope?wait=abc", { key: alice.apiKey }), 400, "invalid_request");
    await expectError(await consume(alice.apiKey, "approval_nope", "0".repeat(64)), 404, "not_found");
    await expectError(await app.api("/v1/approvals/approval_nope/consume", { key: alice.apiKey, body: { bindingHash: "short" } }), 400, "invalid_request");
    expect(await count()).toBe(before);
  });

  it("a hosted run's approval cannot be consumed (the server runs it)", async () => {
    const { approval, env } = await invokeApproval(app, operator.apiKey, "echo hosted");
    await expectError(await consume(operator.apiKey, approval.id, "0".repeat(64)), 409, "conflict");
    expect((await view(operator.apiKey, approval.id)).responseId).toBe(env.id);
  });
});

describe(`External approvals of the caller's own actions (${testDbKind()})`, () => {
  const email = (args: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ action: "send_email", arguments: args, ...extra });
  const count = async () => (await listIds(operator.apiKey)).length + (await listIds(operator.apiKey, "decided")).length;

  it("any action name: the default policy asks a person (risk medium); approved, consumed once, run by the caller", async () => {
    for (const action of ["send_email", "payments.refund", "deploy:prod", "crm/contacts.delete"]) {
      const created = (await create(alice.apiKey, { action, arguments: { id: 7 } })) as TView;
      expect(created).toMatchObject({ status: "pending", action, risk: "medium", arguments: { id: 7 }, edited: false });
      expect((await decide(operator.apiKey, created.id, { decision: "approve" })).status).toBe(200);
      expect((await consume(alice.apiKey, created.id, created.bindingHash)).status).toBe(200);
    }
    const listed = (await (await app.api("/v1/approvals?status=decided", { key: operator.apiKey })).json()) as { approvals: Array<{ action: string; toolName: string; message: string }> };
    expect(listed.approvals.find((a) => a.action === "crm/contacts.delete")).toMatchObject({ toolName: "crm/contacts.delete", message: expect.stringContaining("crm/contacts.delete") });
  });

  it("a declared action: its schema (422 naming the field, nothing created), its description, a denial with a reply", async () => {
    const before = await count();
    const missing = await expectError(await app.api("/v1/approvals", { key: alice.apiKey, body: email({ subject: "Hi" }, { agent: "ops" }) }), 422, "validation_failed");
    expect(missing.detail).toContain("arguments.to: is required");
    const extra = await expectError(await app.api("/v1/approvals", { key: alice.apiKey, body: email({ to: "a@example.com", subject: "Hi", cc: "b@example.com" }, { agent: "ops" }) }), 422, "validation_failed");
    expect(extra.detail).toContain("arguments.cc: is not allowed");
    const typed = await expectError(await app.api("/v1/approvals", { key: alice.apiKey, body: email({ to: 42, subject: "" }, { agent: "ops" }) }), 422, "validation_failed");
    expect(typed.detail).toMatch(/arguments\.to: must be string.*arguments\.subject: must NOT have fewer than 1 characters|arguments\.subject.*arguments\.to/);
    expect(await count()).toBe(before);

    const created = (await create(alice.apiKey, email({ to: "ann@example.com", subject: "Your refund", body: "Done." }, { agent: "ops" }))) as TView;
    expect(created).toMatchObject({ status: "pending", risk: "medium" });
    const listed = (await (await app.api("/v1/approvals?status=pending", { key: operator.apiKey })).json()) as { approvals: Array<{ id: string; message: string; agent: string }> };
    expect(listed.approvals.find((a) => a.id === created.id)).toMatchObject({ agent: "ops", message: "Send an email to a customer" });
    expect((await decide(operator.apiKey, created.id, { decision: "deny", message: "Wrong customer: use ann.b@example.com." })).status).toBe(200);
    expect(await view(alice.apiKey, created.id)).toMatchObject({ status: "denied", message: "Wrong customer: use ann.b@example.com." });
    await expectError(await consume(alice.apiKey, created.id, created.bindingHash), 409, "not_approved");
  });

  it("an approver's edit is checked by the action's schema, re-bound, and consumed with the edited hash only", async () => {
    const created = (await create(alice.apiKey, email({ to: "ann@example.com", subject: "Refund" }, { agent: "ops" }))) as TView;
    const bad = await expectError(await decide(operator.apiKey, created.id, { decision: "approve", arguments: { to: "ann@example.com" } }), 422, "validation_failed");
    expect(bad.detail).toContain("arguments.subject: is required");
    expect((await view(alice.apiKey, created.id)).status).toBe("pending");
    const edited = { to: "ann@example.com", subject: "Refund", body: "Refund of 20 EUR issued." };
    expect((await decide(operator.apiKey, created.id, { decision: "approve", arguments: edited })).status).toBe(200);
    const seen = await view(alice.apiKey, created.id);
    expect(seen).toMatchObject({ status: "approved", edited: true, arguments: edited, originalArguments: { to: "ann@example.com", subject: "Refund" } });
    await expectError(await consume(alice.apiKey, created.id, created.bindingHash), 409, "binding_changed");
    expect((await consume(alice.apiKey, created.id, seen.bindingHash)).status).toBe(200);
  });

  it("predicates (never, risk), per-action approvers and quorum; the `*` default; the reviewer for a reviewed action", async () => {
    const small = (await create(alice.apiKey, { action: "payments.refund", arguments: { amount: 20, order: "o-1" }, agent: "ops" })) as TView;
    expect(small).toMatchObject({ status: "approved", risk: "low", decidedVia: "system" });
    const large = (await create(alice.apiKey, { action: "payments.refund", arguments: { amount: 500, order: "o-2" }, agent: "ops" })) as TView;
    expect(large).toMatchObject({ status: "pending", risk: "high" });
    // Only admins decide refunds (the action's approvers), and two of them (its quorum); the console's inbox says so before anyone clicks.
    const inbox = async (key: string) =>
      ((await trpcQuery(app, key, "inbox.list", { status: "pending" })).body.result as { data: { rows: Array<{ id: string; refusalCode: string | null }> } }).data.rows.find((r) => r.id === large.id);
    expect((await inbox(operator.apiKey))?.refusalCode).toBeTruthy();
    expect((await inbox(admin.apiKey))?.refusalCode).toBeNull();
    await expectError(await decide(operator.apiKey, large.id, { decision: "approve" }), 403, "forbidden");
    expect((await decide(admin.apiKey, large.id, { decision: "approve" })).status).toBe(202);
    expect((await view(alice.apiKey, large.id)).status).toBe("pending");
    expect((await decide(admin2.apiKey, large.id, { decision: "approve" })).status).toBe(200);
    expect((await view(alice.apiKey, large.id)).status).toBe("approved");

    expect(await create(alice.apiKey, { action: "crm.note", arguments: { text: "hi" }, agent: "ops" })).toMatchObject({ status: "pending", risk: "low" });

    const reviewed = (await create(alice.apiKey, { action: "deploy:prod", arguments: { branch: "main" }, agent: "ops" })) as TView;
    expect(reviewed.status).toBe("pending");
    const listed = (await (await app.api("/v1/approvals?status=pending", { key: operator.apiKey })).json()) as { approvals: Array<{ id: string; reviewer: string | null }> };
    expect(listed.approvals.find((a) => a.id === reviewed.id)?.reviewer).toBe("rules");
    const denied = (await create(alice.apiKey, { action: "deploy:prod", arguments: { command: "rm -rf /srv/data" }, agent: "ops" })) as TView;
    expect(denied).toMatchObject({ status: "denied", risk: "high" });
    expect(denied.message).toBeTruthy();
  });

  it("a reviewed action goes to the configured model reviewer with its name, its description and the arguments", async () => {
    const model = await fakeModel();
    const reviewed = await startTestApp({ reviewer: createModelReviewer({ baseURL: model.url, model: "m", timeoutMs: 30_000 }), agentsFile: actionsAgentsFile() });
    try {
      const requester = await reviewed.user("member");
      model.mode = "ask";
      const res = await reviewed.api("/v1/approvals", { key: requester.apiKey, body: { action: "deploy:prod", arguments: { branch: "release-7" }, agent: "ops" } });
      expect(res.status, await res.clone().text()).toBe(201);
      expect(((await res.json()) as TView).status).toBe("pending");
      expect(model.bodies).toHaveLength(1);
      const prompt = model.bodies[0] as string;
      expect(prompt).toContain("deploy:prod");
      expect(prompt).toContain("Deploy the main branch to production");
      expect(prompt).toContain("release-7");
    } finally {
      await reviewed.close();
      model.server.close();
    }
  }, 180_000);

  it('externalActions "declared": an undeclared name is 422 naming it, nothing created; a declared one is asked', async () => {
    const before = await count();
    const refused = await expectError(await app.api("/v1/approvals", { key: alice.apiKey, body: { action: "send_sms", arguments: { to: "+1" }, agent: "strict" } }), 422, "validation_failed");
    expect(refused.detail).toContain("send_sms");
    expect(refused.detail).toContain("declared");
    expect(await count()).toBe(before);
    expect(await create(alice.apiKey, email({ to: "a@example.com" }, { agent: "strict" }))).toMatchObject({ status: "pending", risk: "medium" });
  });
});
