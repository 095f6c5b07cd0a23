import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { DECISION_OUTCOMES, type TDecisionOutcome } from "../../server/core/vocabulary";
import type { TExecReviewer } from "../../server/reviewer";
import type { TDecisionAnalytics } from "../../server/services/read/analytics";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { execTurn, expectError, ok200, script, settledResponse, type TBody } from "./helpers";
import { trpcGet } from "./runtime-helpers";

/**
 * Decision analytics through `/v1` and tRPC: every figure equals what this test counted itself
 * while it made each outcome happen through the public API (docs/analytics.md).
 */

// A reviewer that decides by the command's first word after `echo`: deterministic, no model.
const reviewer: TExecReviewer = {
  name: "test",
  review: async (request) => {
    const command = String((request.arguments as { command?: unknown }).command ?? "");
    const by = { reviewer: "test", latencyMs: 1 };
    if (command.startsWith("echo rev-allow")) return { decision: "allow-once", risk: "low", rationale: "harmless", ...by };
    if (command.startsWith("echo rev-deny")) return { decision: "deny", risk: "high", guidance: "do not", rationale: "dangerous", ...by };
    return { decision: "ask", risk: null, rationale: "a person should look", ...by };
  },
};

const agentsFile = {
  builtins: false,
  defaultAgent: "ana",
  agents: [
    {
      name: "ana",
      harness: "scripted",
      tools: { exec: { approval: "review", predicates: [{ match: [{ argument: "command", regex: "^echo policy" }], approval: "never" }] }, echo: {} },
      grants: { session: true },
      reviewEdits: false,
    },
    { name: "other", harness: "scripted", tools: { exec: { approval: "always" } } },
  ],
};

let app: TTestApp;
let member: TTestUser;
let otherMember: TTestUser;
let operator: TTestUser;
let admin: TTestUser;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "cs-analytics-"));
  const file = join(dir, "agents.json");
  writeFileSync(file, JSON.stringify(agentsFile));
  app = await startTestApp({ agentsFile: file, reviewer, expirySweepMs: 200 });
  member = await app.user("member");
  otherMember = await app.user("member");
  operator = await app.user("operator", "Olga Operator");
  admin = await app.user("admin", "Ada Admin");
}, 120_000);
afterAll(async () => {
  await app?.close();
});

type TCounts = Record<TDecisionOutcome, number>;
const zero = (): TCounts => Object.fromEntries(DECISION_OUTCOMES.map((o) => [o, 0])) as TCounts;

/** What the test did, counted as it did it. */
const expected = { all: zero(), member: zero(), ana: zero(), byAdmin: zero() };
const count = (outcome: TDecisionOutcome, who: "member" | "other", agent: string, by?: "operator" | "admin") => {
  expected.all[outcome]++;
  if (who === "member") expected.member[outcome]++;
  if (agent === "ana") expected.ana[outcome]++;
  if (by === "admin") expected.byAdmin[outcome]++;
};

const run = async (key: string, command: string, { approvalTtlMs = 600_000, ...extra }: { approvalTtlMs?: number; sessionId?: string; agent?: string } = {}) => {
  const res = await app.api("/v1/responses", { key, body: { input: script([execTurn(command), { text: "done" }], { approvalTtlMs }), ...extra } });
  return ok200(res);
};
const asked = async (key: string, command: string, extra: Parameters<typeof run>[2] = {}) => {
  const env = await run(key, command, extra);
  expect(env.status).toBe("requires_action");
  return env as TBody & { requiredAction: { id: string } };
};
const decideAs = async (key: string, approvalId: string, body: Record<string, unknown>) => ok200(await app.api(`/v1/approvals/${approvalId}`, { key, body }));
type TPage = { rows: Array<{ id: string; outcome: string; requestKey: string; decider: string | null }>; nextCursor: string | null };
/** One page of `analytics.requests` (its HTTP status checked). */
const requestsOf = async (key: string, input: Record<string, unknown>): Promise<TPage> => {
  const res = await trpcGet(app, key, "analytics.requests", input);
  expect(res.status).toBe(200);
  return res.body.result?.data as TPage;
};
const figures = async (key: string, query = "") => (await ok200(await app.api(`/v1/analytics/decisions${query}`, { key }))) as unknown as TDecisionAnalytics;
const countsOf = (f: TDecisionAnalytics): TCounts => Object.fromEntries(DECISION_OUTCOMES.map((o) => [o, (f.totals as Record<string, number>)[o]])) as TCounts;
const sum = (c: TCounts) => Object.values(c).reduce((a, b) => a + b, 0);

describe(`decision analytics (${testDbKind()})`, () => {
  it("counts every gated request once, in the outcome the test gave it", async () => {
    // A person approves, three times the same request; once it is denied.
    for (let i = 0; i < 3; i++) {
      const env = await asked(member.apiKey, "echo asked-same");
      await decideAs(operator.apiKey, env.requiredAction.id, { decision: "approve" });
      count("approved", "member", "ana", "operator");
    }
    const denied = await asked(member.apiKey, "echo asked-same");
    await decideAs(admin.apiKey, denied.requiredAction.id, { decision: "deny" });
    count("denied", "member", "ana", "admin");
    // Approved after an edit; denied with a reply.
    const edited = await asked(member.apiKey, "echo asked-edit");
    await decideAs(admin.apiKey, edited.requiredAction.id, { decision: "approve", arguments: { command: "echo edited" } });
    count("edited", "member", "ana", "admin");
    const replied = await asked(member.apiKey, "echo asked-reply");
    await decideAs(operator.apiKey, replied.requiredAction.id, { decision: "deny", message: "use staging" });
    count("replied", "member", "ana", "operator");
    // Expired (a short time to live) and cancelled (the run cancelled while it waits).
    const expiring = await asked(member.apiKey, "echo asked-expire", { approvalTtlMs: 1000 });
    await settledResponse(app, member.apiKey, expiring);
    count("expired", "member", "ana");
    const cancelled = await asked(member.apiKey, "echo asked-cancel");
    await ok200(await app.api(`/v1/responses/${cancelled.id}/cancel`, { key: member.apiKey, body: {} }));
    count("cancelled", "member", "ana");
    // Nobody asked: a `never` predicate, the reviewer (allow and deny), a standing grant.
    await settledResponse(app, member.apiKey, await run(member.apiKey, "echo policy-one"));
    count("policy", "member", "ana");
    await settledResponse(app, member.apiKey, await run(member.apiKey, "echo rev-allow"));
    count("reviewer", "member", "ana");
    await settledResponse(app, member.apiKey, await run(member.apiKey, "echo rev-deny"));
    count("reviewer", "member", "ana");
    const granting = await asked(member.apiKey, "echo granted");
    await decideAs(operator.apiKey, granting.requiredAction.id, { decision: "approve", grant: "session" });
    count("approved", "member", "ana", "operator");
    const reused = await run(member.apiKey, "echo granted", { sessionId: granting.sessionId });
    expect((await settledResponse(app, member.apiKey, reused)).status).toBe("completed");
    count("grant", "member", "ana");
    // External approvals: one settled by the policy when asked, one a person denies.
    const external = await app.api("/v1/approvals", { key: member.apiKey, body: { action: "exec", arguments: { command: "echo policy-external" } } });
    expect(external.status).toBe(201);
    expect(await external.json()).toMatchObject({ status: "approved" });
    count("policy", "member", "ana");
    const externalAsked = (await (await app.api("/v1/approvals", { key: member.apiKey, body: { action: "exec", arguments: { command: "echo external-asked" } } })).json()) as { id: string; status: string };
    expect(externalAsked.status).toBe("pending");
    await decideAs(operator.apiKey, externalAsked.id, { decision: "deny" });
    count("denied", "member", "ana", "operator");
    // Another member's request, of another agent.
    const theirs = await asked(otherMember.apiKey, "echo theirs", { agent: "other" });
    await decideAs(operator.apiKey, theirs.requiredAction.id, { decision: "approve" });
    count("approved", "other", "other", "operator");
    // Still pending: not an outcome yet.
    await asked(member.apiKey, "echo still-pending");

    const all = await figures(operator.apiKey);
    expect(countsOf(all)).toEqual(expected.all);
    expect(all.totals.requests).toBe(sum(expected.all));
    expect(all.totals.pending).toBe(1);
    // Every request of today is on today's row (the period's other days are empty).
    const today = all.perDay.find((d) => Object.values(d.counts).some((n) => n > 0));
    expect(today?.counts).toEqual(expected.all);
    expect(all.perDay.length).toBeGreaterThanOrEqual(30);

    // Filters: one agent; one approver (by email), who decided only some.
    expect(countsOf(await figures(operator.apiKey, "?agent=ana"))).toEqual(expected.ana);
    expect(countsOf(await figures(operator.apiKey, `?approver=${encodeURIComponent(admin.email)}`))).toEqual(expected.byAdmin);
    expect(countsOf(await figures(operator.apiKey, `?approver=${admin.userId}`))).toEqual(expected.byAdmin);
    const onlyPolicy = countsOf(await figures(operator.apiKey, "?outcome=policy"));
    expect(onlyPolicy).toEqual({ ...zero(), policy: expected.all.policy });
    // A member sees its own requests only; another member sees theirs.
    expect(countsOf(await figures(member.apiKey))).toEqual(expected.member);
    expect(sum(countsOf(await figures(otherMember.apiKey)))).toBe(1);
  });

  it("times people took, the most repeated request, expiries, and the requests behind a figure", async () => {
    const all = await figures(operator.apiKey);
    const byApprover = new Map(all.decisionTimes.byApprover.map((t) => [t.key, t]));
    expect(byApprover.get(operator.userId)).toMatchObject({ name: "Olga Operator", count: 7 });
    expect(byApprover.get(admin.userId)).toMatchObject({ name: "Ada Admin", count: 2 });
    for (const t of all.decisionTimes.byApprover) expect(t.p90Ms).toBeGreaterThanOrEqual(t.p50Ms);
    expect(all.decisionTimes.byAgent.map((t) => [t.key, t.count]).sort()).toEqual([
      ["ana", 8],
      ["other", 1],
    ]);
    expect(all.decisionTimes.histogram.reduce((a, b) => a + b.count, 0)).toBe(9);
    expect(all.decisionTimes.histogram.at(-1)?.upToSeconds).toBeNull();

    const top = all.repeated[0];
    expect(top).toMatchObject({ action: "tool:exec", agent: "ana", count: 4, arguments: { command: "echo asked-same" } });
    expect(top?.outcomes).toMatchObject({ approved: 3, denied: 1, edited: 0 });

    expect(all.expired).toHaveLength(1);
    expect(all.expired[0]).toMatchObject({ action: "tool:exec", agent: "ana", notified: [] });

    // The list behind the top repeated request, then behind one outcome of one day, page by page.
    const key = top?.requestKey ?? "";
    const rows = (await requestsOf(operator.apiKey, { requestKey: key })).rows;
    expect(rows.map((r) => r.outcome).sort()).toEqual(["approved", "approved", "approved", "denied"]);
    expect(new Set(rows.map((r) => r.decider))).toEqual(new Set(["Olga Operator", "Ada Admin"]));
    const day = all.perDay.find((d) => d.counts.policy > 0)?.day;
    const first = await requestsOf(operator.apiKey, { outcome: "policy", day, limit: 1, timeZone: "UTC" });
    expect(first.rows).toHaveLength(1);
    const second = await requestsOf(operator.apiKey, { outcome: "policy", day, limit: 1, timeZone: "UTC", cursor: first.nextCursor });
    expect(second.rows).toHaveLength(1);
    expect(second.rows[0]?.id).not.toBe(first.rows[0]?.id);
    expect(second.nextCursor).toBeNull();
    // Each bar of the histogram lists exactly the decisions it counts.
    const buckets = all.decisionTimes.histogram;
    for (const [i, bucket] of buckets.entries()) {
      const bounds = { decisionSecondsMin: buckets[i - 1]?.upToSeconds ?? 0, ...(bucket.upToSeconds !== null ? { decisionSecondsMax: bucket.upToSeconds } : {}) };
      expect((await requestsOf(operator.apiKey, { ...bounds, limit: 200 })).rows).toHaveLength(bucket.count);
    }
    // A member's list holds its own requests only.
    expect((await requestsOf(otherMember.apiKey, {})).rows).toHaveLength(1);

    // Each chart on its own (as the console asks) is the same as its part of the whole.
    const period = { from: all.from, to: all.to };
    const part = async (name: string) => (await trpcGet(app, operator.apiKey, `analytics.${name}`, period)).body.result?.data as Partial<TDecisionAnalytics>;
    const whole = await figures(operator.apiKey, `?from=${encodeURIComponent(all.from)}&to=${encodeURIComponent(all.to)}`);
    expect((await part("outcomes")).totals).toEqual(whole.totals);
    expect((await part("outcomes")).perDay).toEqual(whole.perDay);
    expect((await part("times")).decisionTimes).toEqual(whole.decisionTimes);
    expect((await part("repeated")).repeated).toEqual(whole.repeated);
    expect((await part("expired")).expired).toEqual(whole.expired);
    // tRPC gives the same figures as /v1.
    const viaTrpc = await trpcGet(app, operator.apiKey, "analytics.decisions", { from: all.from, to: all.to });
    expect(viaTrpc.body.result?.data).toEqual(await figures(operator.apiKey, `?from=${encodeURIComponent(all.from)}&to=${encodeURIComponent(all.to)}`));
  });

  it("refuses a bad period or filter with a clear 400, on both transports", async () => {
    const from = "2025-01-01T00:00:00Z";
    const tooLong = await expectError(await app.api(`/v1/analytics/decisions?from=${from}&to=2026-06-01T00:00:00Z`, { key: operator.apiKey }), 400, "invalid_request");
    expect(tooLong.detail).toContain("365 days");
    await expectError(await app.api(`/v1/analytics/decisions?from=2026-06-01T00:00:00Z&to=${from}`, { key: operator.apiKey }), 400, "invalid_request");
    await expectError(await app.api("/v1/analytics/decisions?outcome=maybe", { key: operator.apiKey }), 400, "invalid_request");
    await expectError(await app.api("/v1/analytics/decisions?timeZone=Mars/Olympus", { key: operator.apiKey }), 400, "invalid_request");
    await expectError(await app.api("/v1/analytics/decisions?colour=red", { key: operator.apiKey }), 400, "invalid_request");
    expect((await trpcGet(app, operator.apiKey, "analytics.decisions", { from, to: "2026-06-01T00:00:00Z" })).status).toBe(400);
    // A cursor this list never gave starts at the first page, as every keyset list of the console does.
    expect((await requestsOf(operator.apiKey, { cursor: "not-a-cursor", limit: 1 })).rows).toHaveLength(1);
    expect((await app.api("/v1/analytics/decisions")).status).toBe(401);
  });
});
