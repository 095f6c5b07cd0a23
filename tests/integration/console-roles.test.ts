import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approvals } from "../../db/schema";
import { testDbKind } from "../../db/testing";
import { createApiKey } from "../../server/auth/api-keys";
import { createPairing } from "../../server/devices/store";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { execTurn, invoke, invokeApproval, script } from "./helpers";

/**
 * Every console tRPC procedure (and the trajectory export route) called over HTTP with each
 * role's API key as a Bearer token, against the outcome this table expects. `owner` is the member
 * who owns the fixtures; `other` is a second member; `anon` sends no credentials. Server-side
 * checks only: nothing here depends on which buttons the console shows.
 */
type TOutcome = "ok" | 401 | 403 | 404 | 409;
type TCaller = "anon" | "owner" | "other" | "operator" | "auditor" | "admin";
const CALLERS: TCaller[] = ["anon", "owner", "other", "operator", "auditor", "admin"];

/** Fixtures a cell may use; mutations get fresh ones per cell so each role acts on untouched state. */
type TFixture = {
  responseId: string;
  sessionId: string;
  approvalId: string;
  bindingHash: string;
  questionId: string;
  keyId: string;
  userId: string;
  /** A member an admin disabled (for admin.enableUser). */
  disabledUserId: string;
  deviceId: string;
  grantId: string;
};

type TRow = {
  path: string;
  kind: "query" | "mutation" | "subscription" | "export";
  /** Expected outcome per caller: anon, owner, other, operator, auditor, admin. */
  expect: [TOutcome, TOutcome, TOutcome, TOutcome, TOutcome, TOutcome];
  input?: (f: TFixture) => unknown;
  /** A fresh fixture for every caller (mutations that change what they touch). */
  fresh?: boolean;
};

const ALL_OK: TRow["expect"] = [401, "ok", "ok", "ok", "ok", "ok"];
/** Read one object of the owner's: others' objects look missing to another member. */
const OWNER_READ: TRow["expect"] = [401, "ok", 404, "ok", "ok", "ok"];
/** Act on one object of the owner's: the owner, operators and admins; auditors are read-only. */
const OWNER_ACT: TRow["expect"] = [401, "ok", 404, "ok", 403, "ok"];
/** Decide an approval of the owner's run: operators and admins; never its requester (a member, separation of duties), nor auditors. */
const OWNER_DECIDE: TRow["expect"] = [401, 403, 404, "ok", 403, "ok"];
const WORKSPACE_READERS: TRow["expect"] = [401, 403, 403, "ok", "ok", "ok"];
const ADMIN_ONLY: TRow["expect"] = [401, 403, 403, 403, 403, "ok"];
/** Admins and auditors: the admin trail, the effective configuration. */
const ADMINS_AUDITORS: TRow["expect"] = [401, 403, 403, 403, "ok", "ok"];

const now = () => new Date().toISOString();
const weekAgo = () => new Date(Date.now() - 7 * 86_400_000).toISOString();

// biome-ignore format: the table reads as a table
const MATRIX: TRow[] = [
  // ── existing procedures ──────────────────────────────────────────────────────────────
  { path: "me", kind: "query", expect: ALL_OK },
  // What the login page offers: for anyone, signed in or not.
  { path: "signInMethods", kind: "query", expect: ["ok", "ok", "ok", "ok", "ok", "ok"] },
  { path: "approvals.list", kind: "query", expect: ALL_OK, input: () => ({ status: "pending" }) },
  { path: "approvals.decide", kind: "mutation", expect: OWNER_DECIDE, fresh: true, input: (f) => ({ approvalId: f.approvalId, decision: "deny", bindingHash: f.bindingHash }) },
  { path: "responses.list", kind: "query", expect: ALL_OK },
  { path: "responses.get", kind: "query", expect: OWNER_READ, input: (f) => ({ responseId: f.responseId }) },
  { path: "responses.sessionUsage", kind: "query", expect: OWNER_READ, input: (f) => ({ sessionId: f.sessionId }) },
  { path: "responses.steer", kind: "mutation", expect: OWNER_ACT, fresh: true, input: (f) => ({ responseId: f.responseId, text: "please hurry" }) },
  { path: "responses.cancel", kind: "mutation", expect: OWNER_ACT, fresh: true, input: (f) => ({ responseId: f.responseId }) },
  // Authorized like steering; the fixture's scripted harness answers no side questions, so those let through get its 409 (tests/integration/plugins-side.test.ts asks one that does).
  { path: "responses.askSideQuestion", kind: "mutation", expect: [401, 409, 404, 409, 403, 409], input: (f) => ({ responseId: f.responseId, question: "what now?" }) },
  { path: "responses.onFrames", kind: "subscription", expect: OWNER_READ, input: (f) => ({ responseId: f.responseId }) },
  { path: "users.names", kind: "query", expect: ALL_OK, input: (f) => ({ ids: [f.userId] }) },
  { path: "settings.get", kind: "query", expect: ALL_OK },
  { path: "settings.setLocale", kind: "mutation", expect: ALL_OK, input: () => ({ locale: "zh-CN" }) },
  { path: "account.sessions", kind: "query", expect: ALL_OK },
  // Only one's own sessions end: any other id is not found, for every role.
  { path: "account.endSession", kind: "mutation", expect: [401, 404, 404, 404, 404, 404], input: () => ({ id: "login_session_of_nobody" }) },
  { path: "settings.setName", kind: "mutation", expect: ALL_OK, input: () => ({ name: `matrix ${Math.random().toString(36).slice(2, 10)}` }) },
  { path: "question.list", kind: "query", expect: ALL_OK, input: () => ({ status: "pending" }) },
  { path: "question.page", kind: "query", expect: ALL_OK, input: () => ({ status: "settled", limit: 5 }) },
  { path: "question.get", kind: "query", expect: OWNER_READ, input: (f) => ({ id: f.questionId }) },
  { path: "question.context", kind: "query", expect: OWNER_READ, input: (f) => ({ id: f.questionId }) },
  { path: "question.viewer", kind: "query", expect: ALL_OK, input: (f) => ({ id: f.questionId }) },
  { path: "question.resolve", kind: "mutation", expect: OWNER_ACT, fresh: true, input: (f) => ({ id: f.questionId, answers: { env: ["prod"] } }) },
  { path: "question.request", kind: "mutation", expect: [401, "ok", "ok", "ok", 403, "ok"], input: () => ({ questions: [{ questionId: "env", header: "Env", question: "Which?" }], timeoutMs: 60_000 }) },
  { path: "devices.list", kind: "query", expect: WORKSPACE_READERS },
  { path: "devices.page", kind: "query", expect: WORKSPACE_READERS, input: () => ({ limit: 5 }) },
  { path: "devices.createPairing", kind: "mutation", expect: ADMIN_ONLY, input: () => ({ name: `dev-${Math.random().toString(36).slice(2, 8)}` }) },
  { path: "devices.revoke", kind: "mutation", expect: ADMIN_ONLY, fresh: true, input: (f) => ({ deviceId: f.deviceId }) },
  { path: "grants.list", kind: "query", expect: ALL_OK, input: () => ({ status: "all" }) },
  { path: "grants.page", kind: "query", expect: ALL_OK, input: () => ({ status: "all", limit: 5 }) },
  { path: "grants.revoke", kind: "mutation", expect: OWNER_ACT, fresh: true, input: (f) => ({ grantId: f.grantId }) },
  { path: "sessions.get", kind: "query", expect: OWNER_READ, input: (f) => ({ sessionId: f.sessionId }) },
  { path: "sessions.setAccess", kind: "mutation", expect: OWNER_ACT, fresh: true, input: (f) => ({ sessionId: f.sessionId, access: "default" }) },
  // Full access is granted only by operators and admins: an owner may lower its own session, never raise it.
  { path: "sessions.setAccess", kind: "mutation", expect: [401, 403, 404, "ok", 403, "ok"], fresh: true, input: (f) => ({ sessionId: f.sessionId, access: "full" }) },
  // ── console: home, usage, people, agents ─────────────────────────────────────────────
  { path: "console.waiting", kind: "query", expect: ALL_OK },
  { path: "console.onActivity", kind: "subscription", expect: ALL_OK, input: () => ({}) },
  { path: "console.usage", kind: "query", expect: ALL_OK, input: () => ({ from: weekAgo(), to: now() }) },
  { path: "console.people", kind: "query", expect: ALL_OK },
  { path: "analytics.decisions", kind: "query", expect: ALL_OK, input: () => ({}) },
  { path: "analytics.requests", kind: "query", expect: ALL_OK, input: () => ({}) },
  { path: "analytics.outcomes", kind: "query", expect: ALL_OK, input: () => ({}) },
  { path: "analytics.times", kind: "query", expect: ALL_OK, input: () => ({}) },
  { path: "analytics.repeated", kind: "query", expect: ALL_OK, input: () => ({}) },
  { path: "analytics.expired", kind: "query", expect: ALL_OK, input: () => ({}) },
  { path: "console.agents", kind: "query", expect: ALL_OK },
  // ── approvals inbox ──────────────────────────────────────────────────────────────────
  { path: "inbox.list", kind: "query", expect: ALL_OK, input: () => ({ status: "pending", risks: ["medium"] }) },
  { path: "inbox.context", kind: "query", expect: OWNER_READ, input: (f) => ({ approvalId: f.approvalId }) },
  { path: "inbox.files", kind: "query", expect: OWNER_READ, input: (f) => ({ approvalId: f.approvalId }) },
  { path: "inbox.decideMany", kind: "mutation", expect: OWNER_DECIDE, fresh: true, input: (f) => ({ decision: "approve", items: [{ approvalId: f.approvalId, bindingHash: f.bindingHash }] }) },
  // ── responses, sessions, trajectory audit ────────────────────────────────────────────
  { path: "audit.responses", kind: "query", expect: ALL_OK, input: () => ({ statuses: ["requires_action"], limit: 10 }) },
  { path: "audit.sessions", kind: "query", expect: ALL_OK, input: () => ({ state: "active" }) },
  { path: "audit.response", kind: "query", expect: OWNER_READ, input: (f) => ({ responseId: f.responseId }) },
  { path: "audit.session", kind: "query", expect: OWNER_READ, input: (f) => ({ sessionId: f.sessionId }) },
  { path: "audit.trajectory", kind: "query", expect: OWNER_READ, input: (f) => ({ responseId: f.responseId, q: "approval" }) },
  { path: "audit.timeline", kind: "query", expect: OWNER_READ, input: (f) => ({ responseId: f.responseId }) },
  { path: "audit.actors", kind: "query", expect: OWNER_READ, input: (f) => ({ sessionId: f.sessionId }) },
  { path: "/api/export/trajectory", kind: "export", expect: OWNER_READ, input: (f) => `?responseId=${f.responseId}` },
  // ── admin ────────────────────────────────────────────────────────────────────────────
  { path: "admin.users", kind: "query", expect: WORKSPACE_READERS },
  { path: "admin.usersPage", kind: "query", expect: WORKSPACE_READERS, input: () => ({ limit: 5 }) },
  { path: "admin.setRole", kind: "mutation", expect: ADMIN_ONLY, fresh: true, input: (f) => ({ userId: f.userId, role: "operator" }) },
  { path: "admin.disableUser", kind: "mutation", expect: ADMIN_ONLY, fresh: true, input: (f) => ({ userId: f.userId }) },
  { path: "admin.setUserTeams", kind: "mutation", expect: ADMIN_ONLY, fresh: true, input: (f) => ({ userId: f.userId, teams: ["matrix-team"] }) },
  { path: "admin.renameUser", kind: "mutation", expect: ADMIN_ONLY, fresh: true, input: (f) => ({ userId: f.userId, name: `matrix ${Math.random().toString(36).slice(2, 10)}` }) },
  { path: "admin.enableUser", kind: "mutation", expect: ADMIN_ONLY, fresh: true, input: (f) => ({ userId: f.disabledUserId }) },
  { path: "admin.deleteUser", kind: "mutation", expect: ADMIN_ONLY, fresh: true, input: (f) => ({ userId: f.userId }) },
  { path: "admin.offboardUser", kind: "mutation", expect: ADMIN_ONLY, fresh: true, input: (f) => ({ userId: f.userId }) },
  { path: "admin.plugins", kind: "query", expect: WORKSPACE_READERS },
  { path: "admin.trail", kind: "query", expect: ADMINS_AUDITORS, input: () => ({ limit: 5 }) },
  { path: "admin.trailActors", kind: "query", expect: ADMINS_AUDITORS },
  { path: "admin.agentsConfig", kind: "query", expect: ADMINS_AUDITORS },
  { path: "admin.reloadAgents", kind: "mutation", expect: ADMIN_ONLY },
  { path: "policy.suggestions", kind: "query", expect: WORKSPACE_READERS, input: () => ({ days: 14 }) },
  { path: "policy.simulate", kind: "mutation", expect: WORKSPACE_READERS, input: () => ({ file: { agents: [{ name: "m", harness: "scripted", tools: {} }] }, days: 1 }) },
  // Only admins get past the role check; this id names no suggestion.
  { path: "policy.applySuggestion", kind: "mutation", expect: [401, 403, 403, 403, 403, 404], input: () => ({ id: "sug_00000000_0000000000000000", days: 14 }) },
  { path: "policy.dismissSuggestion", kind: "mutation", expect: [401, 403, 403, 403, 403, 404], input: () => ({ id: "sug_00000000_0000000000000000", days: 14 }) },
  { path: "admin.apiKeys", kind: "query", expect: ALL_OK },
  { path: "admin.apiKeysPage", kind: "query", expect: ALL_OK, input: () => ({ limit: 5 }) },
  { path: "admin.createApiKey", kind: "mutation", expect: [401, "ok", "ok", "ok", 403, "ok"], input: () => ({ name: "matrix" }) },
  { path: "admin.revokeApiKey", kind: "mutation", expect: [401, "ok", 404, 404, 403, "ok"], fresh: true, input: (f) => ({ keyId: f.keyId }) },
  // ── notifications: the delivery log (workspace readers); single-use links (the token is the only credential) ──
  { path: "notifications.list", kind: "query", expect: WORKSPACE_READERS, input: () => ({ status: "failed", limit: 10 }) },
  { path: "notifications.attempts", kind: "query", expect: WORKSPACE_READERS, input: () => ({ notificationId: "notif_none" }) },
  { path: "notifications.channels", kind: "query", expect: WORKSPACE_READERS },
  { path: "link.get", kind: "query", expect: [404, 404, 404, 404, 404, 404], input: () => ({ token: "A".repeat(43) }) },
  { path: "link.decide", kind: "mutation", expect: [404, 404, 404, 404, 404, 404], input: () => ({ token: "A".repeat(43), decision: "approve" }) },
  { path: "link.answer", kind: "mutation", expect: [404, 404, 404, 404, 404, 404], input: () => ({ token: "A".repeat(43), answers: { env: ["prod"] } }) },
];

let app: TTestApp;
const users = {} as Record<Exclude<TCaller, "anon">, TTestUser>;
let shared: TFixture;

const HTTP: Record<number, TOutcome> = { 200: "ok", 401: 401, 403: 403, 404: 404 };

/** A requires_action run of the owner's with a pending exec approval, a pending question run, a key, a user and a device. */
async function fixture(): Promise<TFixture> {
  const owner = users.owner;
  const { env, approval } = await invokeApproval(app, owner.apiKey, "echo matrix");
  const [row] = await app.deps.db.select({ bindingHash: approvals.bindingHash }).from(approvals).where(eq(approvals.id, approval.id));
  const asked = await invoke(app, owner.apiKey, script([{ toolCalls: [{ name: "ask_user", arguments: { questions: [{ id: "env", header: "Env", question: "Which environment?", options: [{ label: "staging" }, { label: "prod" }] }] } }] }, { text: "done" }]));
  expect(asked.requiredAction?.type).toBe("question");
  const key = await createApiKey(app.deps.db, owner.userId, "matrix target");
  const target = await app.user("member");
  const disabled = await app.user("member");
  const disabling = await fetch(`${app.url}/api/trpc/admin.disableUser`, {
    method: "POST",
    headers: { authorization: `Bearer ${users.admin.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ userId: disabled.userId }),
  });
  expect(disabling.status).toBe(200);
  const granted = await invokeApproval(app, owner.apiKey, "echo granted");
  const grantRes = await app.api(`/v1/approvals/${granted.approval.id}`, { key: users.operator.apiKey, body: { decision: "approve", grant: "session" } });
  const grantId = ((await grantRes.json()) as { grantId: string }).grantId;
  const device = await createPairing(app.deps.db, { userId: users.admin.userId, role: "admin", name: "admin" }, { channel: "console", clientIp: null }, { name: `matrix-${Math.random().toString(36).slice(2, 10)}`, now: new Date() });
  return {
    responseId: env.id,
    sessionId: env.sessionId,
    approvalId: approval.id,
    bindingHash: row?.bindingHash ?? "",
    questionId: asked.requiredAction?.id as string,
    keyId: key.id,
    userId: target.userId,
    disabledUserId: disabled.userId,
    deviceId: device.deviceId,
    grantId,
  };
}

/** Calls one procedure (or the export route) as one caller; returns the outcome and the body. */
async function call(row: TRow, caller: TCaller, f: TFixture): Promise<{ outcome: TOutcome | number; body: string }> {
  const headers: Record<string, string> = caller === "anon" ? {} : { authorization: `Bearer ${users[caller].apiKey}` };
  const input = row.input?.(f);
  let res: Response;
  if (row.kind === "export") {
    res = await fetch(`${app.url}${row.path}${String(input ?? "")}`, { headers });
  } else if (row.kind === "mutation") {
    res = await fetch(`${app.url}/api/trpc/${row.path}`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(input ?? null) });
  } else {
    const query = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
    const controller = new AbortController();
    res = await fetch(`${app.url}/api/trpc/${row.path}${query}`, { headers: row.kind === "subscription" ? { ...headers, accept: "text/event-stream" } : headers, signal: controller.signal });
    if (row.kind === "subscription") {
      // An SSE stream answers 200 with `connected`, then either its first message or a serialized error.
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let text = "";
      const decoder = new TextDecoder();
      const settled = () => text.split("\n\n").some((block) => /^(data|id):/m.test(block) && !/^event: connected$/m.test(block));
      // A failure bound only (every stream here settles with its first message or error).
      const deadline = Date.now() + 30_000;
      while (!settled() && Date.now() < deadline) {
        const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), deadline - Date.now()))]);
        if (!chunk || chunk.done) break;
        text += decoder.decode(chunk.value, { stream: true });
      }
      controller.abort();
      await reader.cancel().catch(() => {});
      const error = text.match(/event: serialized-error\ndata: (.*)/)?.[1];
      if (res.status === 200 && error) {
        const status = (JSON.parse(error) as { data?: { httpStatus?: number } }).data?.httpStatus ?? 500;
        return { outcome: HTTP[status] ?? status, body: text };
      }
      return { outcome: HTTP[res.status] ?? res.status, body: text };
    }
  }
  const body = await res.text();
  return { outcome: HTTP[res.status] ?? res.status, body };
}

beforeAll(async () => {
  app = await startTestApp();
  for (const role of ["owner", "other", "operator", "auditor", "admin"] as const) {
    users[role] = await app.user(role === "owner" || role === "other" ? "member" : role, `matrix ${role}`);
  }
  shared = await fixture();
});
afterAll(async () => {
  await app?.close();
});

describe(`console role matrix: every procedure × every role (${testDbKind()})`, () => {
  it("the table covers every procedure of the app router", async () => {
    const { appRouter } = await import("../../server/api/trpc/root");
    const procedures = Object.keys(appRouter._def.procedures).sort();
    const covered = MATRIX.filter((r) => r.kind !== "export").map((r) => r.path);
    // Not console procedures: the Gateway's long-poll (covered by the questions suites).
    const elsewhere = ["question.waitAnswer"];
    expect(procedures.filter((p) => !covered.includes(p) && !elsewhere.includes(p))).toEqual([]);
  });

  for (const row of MATRIX) {
    it(`${row.path}: ${CALLERS.map((c, i) => `${c} ${row.expect[i]}`).join(", ")}`, async () => {
      const got: Record<string, TOutcome | number> = {};
      const want: Record<string, TOutcome | number> = {};
      const bodies: Record<string, string> = {};
      for (const [i, caller] of CALLERS.entries()) {
        const f = row.fresh && caller !== "anon" ? await fixture() : shared;
        const result = await call(row, caller, f);
        got[caller] = result.outcome;
        want[caller] = row.expect[i] as TOutcome;
        bodies[caller] = result.body.slice(0, 300);
      }
      expect(got, JSON.stringify(bodies, null, 1)).toEqual(want);
    });
  }
});

describe(`console server-side rules (${testDbKind()})`, () => {
  it("bulk decisions refuse any high-risk item for every role, and decide nothing", async () => {
    for (const caller of ["owner", "operator", "admin"] as const) {
      const low = await fixture();
      const high = await invokeApproval(app, users.owner.apiKey, "rm -rf ./build");
      expect(high.approval.risk).toBe("high");
      const [h] = await app.deps.db.select().from(approvals).where(eq(approvals.id, high.approval.id));
      const res = await fetch(`${app.url}/api/trpc/inbox.decideMany`, {
        method: "POST",
        headers: { authorization: `Bearer ${users[caller].apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ decision: "approve", items: [{ approvalId: low.approvalId, bindingHash: low.bindingHash }, { approvalId: high.approval.id, bindingHash: h?.bindingHash }] }),
      });
      expect(res.status, caller).toBe(403);
      // The owner may decide none of its own run's approvals (separation of duties): that reason comes first.
      expect(await res.text()).toContain(caller === "owner" ? "You started this run" : "High-risk approvals cannot be decided in bulk");
      const statuses = await app.deps.db.select({ id: approvals.id, status: approvals.status }).from(approvals).where(eq(approvals.responseId, low.responseId));
      expect(statuses.map((s) => s.status)).toEqual(["pending"]);
      const [still] = await app.deps.db.select({ status: approvals.status }).from(approvals).where(eq(approvals.id, high.approval.id));
      expect(still?.status).toBe("pending");
    }
  });

  it("an auditor sees every waiting item but a member only its own; the export streams JSONL", async () => {
    const waiting = async (key: string) => {
      const res = await fetch(`${app.url}/api/trpc/console.waiting`, { headers: { authorization: `Bearer ${key}` } });
      return ((await res.json()) as { result: { data: { items: Array<{ userId: string }> } } }).result.data.items;
    };
    const mine = await invoke(app, users.other.apiKey, script([execTurn("echo other")]));
    expect(mine.status).toBe("requires_action");
    const asAuditor = await waiting(users.auditor.apiKey);
    const seen = new Set(asAuditor.map((i) => i.userId));
    expect(seen.has(users.owner.userId) && seen.has(users.other.userId)).toBe(true);
    const asOther = await waiting(users.other.apiKey);
    expect(asOther.length).toBeGreaterThan(0);
    expect(asOther.every((i) => i.userId === users.other.userId)).toBe(true);

    const res = await fetch(`${app.url}/api/export/trajectory?responseId=${shared.responseId}&categories=approval,lifecycle`, { headers: { authorization: `Bearer ${users.auditor.apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    expect(res.headers.get("content-disposition")).toContain(`trajectory-${shared.responseId}.jsonl`);
    const lines = (await res.text()).split("\n").filter(Boolean).map((l) => JSON.parse(l) as { type: string; seq: number; responseId: string });
    expect(lines.map((l) => l.type)).toContain("approval.requested");
    expect(lines.every((l) => l.responseId === shared.responseId)).toBe(true);
    expect(lines.every((l) => /^(approval\.|response\.(created|completed|cancelled)|harness\.|attempt\.|transcript\.|agent_end\.|session\.)/.test(l.type))).toBe(true);
    expect(lines.map((l) => l.seq)).toEqual([...lines.map((l) => l.seq)].sort((a, b) => a - b));
  });

  it("the activity feed resumes from the last event id: a reconnecting client gets exactly what it missed, and only what it may see", async () => {
    /** Opens `console.onActivity` as SSE and collects its messages until `until` holds (or 30 s pass: a failure bound). */
    const feed = async (key: string, lastEventId: string | null, until: (m: Array<{ id?: string; data: Record<string, unknown> }>) => boolean) => {
      const input = encodeURIComponent(JSON.stringify(lastEventId ? { lastEventId } : {}));
      const controller = new AbortController();
      const res = await fetch(`${app.url}/api/trpc/console.onActivity?input=${input}`, { headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" }, signal: controller.signal });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      const messages: Array<{ id?: string; data: Record<string, unknown> }> = [];
      let buffer = "";
      const deadline = Date.now() + 30_000;
      while (!until(messages) && Date.now() < deadline) {
        const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), Math.max(1, deadline - Date.now())))]);
        if (!chunk || chunk.done) break;
        buffer += decoder.decode(chunk.value, { stream: true });
        let at = buffer.indexOf("\n\n");
        while (at >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          at = buffer.indexOf("\n\n");
          if (/^event: /m.test(block)) continue;
          const data = block.match(/^data: (.*)$/m)?.[1];
          if (data) messages.push({ id: block.match(/^id: (.*)$/m)?.[1], data: JSON.parse(data) as Record<string, unknown> });
        }
      }
      controller.abort();
      await reader.cancel().catch(() => {});
      return messages;
    };
    const first = await feed(users.owner.apiKey, null, (m) => m.length >= 1);
    expect(first[0]?.data.kind).toBe("sync");
    const lastSeen = first[0]?.id as string;

    // While the client is away: a new run of the owner's stops for approval.
    const missed = await invokeApproval(app, users.owner.apiKey, "echo while-away");
    const resumed = await feed(users.owner.apiKey, lastSeen, (m) => m.some((x) => x.data.type === "approval.requested"));
    const events = resumed.filter((m) => m.data.kind === "event");
    expect(events.map((m) => m.data.type)).toEqual(expect.arrayContaining(["response.created", "approval.requested", "response.completed"]));
    expect(events.every((m) => Number(m.id) > Number(lastSeen))).toBe(true);
    expect(events.map((m) => Number(m.id))).toEqual([...events.map((m) => Number(m.id))].sort((a, b) => a - b));
    expect(events.find((m) => m.data.type === "approval.requested")?.data.responseId).toBe(missed.env.id);

    // Another member resuming from the same point sees none of it.
    const other = await feed(users.other.apiKey, lastSeen, (m) => m.length >= 1);
    expect(other.filter((m) => m.data.kind === "event" && m.data.responseId === missed.env.id)).toEqual([]);
  });
});

