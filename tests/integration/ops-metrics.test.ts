import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { parseNotifyConfig } from "../../server/notify/config";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { invokeApproval, ok200, rows } from "./helpers";
import { startReceiver } from "./notify-helpers";
import { hasMetric, metricValue, parseMetrics } from "./ops-helpers";

const TOKEN = `metrics-${Math.random().toString(36).slice(2)}-token`;

let app: TTestApp;
let admin: TTestUser;
let operator: TTestUser;
let member: TTestUser;

beforeAll(async () => {
  app = await startTestApp({ metricsToken: TOKEN, metricsPort: 0, expirySweepMs: 200 });
  admin = await app.user("admin");
  operator = await app.user("operator");
  member = await app.user("member");
});
afterAll(async () => {
  await app?.close();
});

/** Scrapes `/metrics` with the metrics token and parses it. */
async function scrape() {
  const res = await app.api("/metrics", { key: TOKEN });
  expect(res.status).toBe(200);
  return parseMetrics(await res.text());
}

async function until<T>(what: string, probe: () => Promise<T | null>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe(`GET /metrics (${testDbKind()})`, () => {
  it("401 without a credential or with a wrong token, 403 for members, operators and auditors, 200 for the metrics token and an admin's key", async () => {
    const none = await app.api("/metrics");
    expect(none.status).toBe(401);
    expect(((await none.json()) as { code: string }).code).toBe("unauthenticated");
    expect((await app.api("/metrics", { key: `${TOKEN}x` })).status).toBe(401);
    const forMember = await app.api("/metrics", { key: member.apiKey });
    expect(forMember.status).toBe(403);
    expect(((await forMember.json()) as { code: string }).code).toBe("forbidden");
    expect((await app.api("/metrics", { key: operator.apiKey })).status).toBe(403);
    expect((await app.api("/metrics", { key: (await app.user("auditor")).apiKey })).status).toBe(403);
    for (const key of [TOKEN, admin.apiKey]) {
      const res = await app.api("/metrics", { key });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      const samples = parseMetrics(text);
      // Every metric is declared (a labelled gauge with no rows yet has no sample).
      for (const name of ["countersign_pending_approvals", "countersign_pending_questions", "countersign_pending_client_tools", "countersign_runs"]) expect(text).toContain(`# TYPE ${name} gauge`);
      for (const name of ["countersign_decisions_total", "countersign_expiries_total", "countersign_notification_attempts_total", "countersign_notification_failures_total", "countersign_rate_limited_total"]) expect(text).toContain(`# TYPE ${name} counter`);
      for (const name of ["countersign_decision_seconds", "countersign_resume_seconds"]) expect(text).toContain(`# TYPE ${name} histogram`);
      for (const name of ["countersign_db_pool_connections", "process_cpu_user_seconds_total"]) expect(hasMetric(samples, name), name).toBe(true);
      expect(metricValue(samples, "countersign_db_pool_connections", { driver: testDbKind() })).toBe(testDbKind() === "pglite" ? 1 : 20);
    }
  });

  it("is served on COUNTERSIGN_METRICS_PORT too, with the same rule, and nothing else there", async () => {
    expect(app.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const url = app.metricsUrl as string;
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: `Bearer ${member.apiKey}` } })).status).toBe(403);
    const ok = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(hasMetric(parseMetrics(await ok.text()), "countersign_db_pool_connections")).toBe(true);
    expect((await fetch(url, { headers: { authorization: `Bearer ${admin.apiKey}` } })).status).toBe(200);
    expect((await fetch(url.replace(/\/metrics$/, "/v1/healthz"))).status).toBe(404);
    expect((await fetch(url, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(405);
  });

  it("pending approvals, runs by status, decisions, time to decision and resume latency move as an approval is created and decided", async () => {
    const before = await scrape();
    const { env, approval } = await invokeApproval(app, member.apiKey, "echo metrics");
    const waiting = await scrape();
    const risk = (approval as { risk: string }).risk;
    expect(metricValue(waiting, "countersign_pending_approvals", { agent: "scripted", risk })).toBe(metricValue(before, "countersign_pending_approvals", { agent: "scripted", risk }) + 1);
    expect(metricValue(waiting, "countersign_runs", { status: "requires_action" })).toBe(metricValue(before, "countersign_runs", { status: "requires_action" }) + 1);

    const decided = await ok200(await app.api(`/v1/approvals/${approval.id}`, { key: operator.apiKey, body: { decision: "approve" } }));
    expect(decided.status).toBe("completed");
    const after = await scrape();
    expect(metricValue(after, "countersign_pending_approvals", { agent: "scripted", risk })).toBe(metricValue(before, "countersign_pending_approvals", { agent: "scripted", risk }));
    expect(metricValue(after, "countersign_runs", { status: "requires_action" })).toBe(metricValue(before, "countersign_runs", { status: "requires_action" }));
    expect(metricValue(after, "countersign_runs", { status: "completed" })).toBe(metricValue(before, "countersign_runs", { status: "completed" }) + 1);
    expect(metricValue(after, "countersign_decisions_total", { outcome: "approved", channel: "http" })).toBe(metricValue(before, "countersign_decisions_total", { outcome: "approved", channel: "http" }) + 1);
    expect(metricValue(after, "countersign_decision_seconds_count", { outcome: "approved" })).toBe(metricValue(before, "countersign_decision_seconds_count", { outcome: "approved" }) + 1);
    expect(metricValue(after, "countersign_resume_seconds_count")).toBe(metricValue(before, "countersign_resume_seconds_count") + 1);
    // The latency is whole milliseconds: a resume within the same millisecond adds 0 (never less).
    expect(metricValue(after, "countersign_resume_seconds_sum")).toBeGreaterThanOrEqual(metricValue(before, "countersign_resume_seconds_sum"));
    expect(env.id).toBeTruthy();

    // A denial with a reply counts as "replied".
    const second = await invokeApproval(app, member.apiKey, "echo again");
    await ok200(await app.api(`/v1/approvals/${second.approval.id}`, { key: operator.apiKey, body: { decision: "deny", message: "use ls" } }));
    const replied = await scrape();
    expect(metricValue(replied, "countersign_decisions_total", { outcome: "replied", channel: "http" })).toBe(metricValue(before, "countersign_decisions_total", { outcome: "replied", channel: "http" }) + 1);
  });

  it("an approval that expires counts once in countersign_expiries_total and leaves the pending gauge", async () => {
    const before = await scrape();
    const { approval } = await invokeApproval(app, member.apiKey, "echo late", { approvalTtlMs: 60_000 });
    const risk = (approval as { risk: string }).risk;
    // The server's clock moves past the expiry (a 1 s TTL could lapse before the test looked, on a loaded machine).
    app.clock.advance(60_000 + 1000);
    let after: Awaited<ReturnType<typeof scrape>>;
    try {
      after = await until("the expiry", async () => {
        const now = await scrape();
        return metricValue(now, "countersign_expiries_total", { kind: "approval" }) > metricValue(before, "countersign_expiries_total", { kind: "approval" }) ? now : null;
      });
    } finally {
      app.clock.reset();
    }
    expect(metricValue(after, "countersign_expiries_total", { kind: "approval" })).toBe(metricValue(before, "countersign_expiries_total", { kind: "approval" }) + 1);
    expect(metricValue(after, "countersign_pending_approvals", { agent: "scripted", risk })).toBe(metricValue(before, "countersign_pending_approvals", { agent: "scripted", risk }));
    const decided = await app.api(`/v1/approvals/${approval.id}`, { key: operator.apiKey, body: { decision: "approve" } });
    expect(decided.status).toBe(409);
    expect(metricValue(await scrape(), "countersign_expiries_total", { kind: "approval" })).toBe(metricValue(after, "countersign_expiries_total", { kind: "approval" }));
  });
});

describe(`rate-limited requests in /metrics (${testDbKind()})`, () => {
  let limited: TTestApp;
  beforeAll(async () => {
    limited = await startTestApp({ metricsToken: TOKEN, metricsPort: 0, rateLimit: { key: { perSecond: 0.01, burst: 2 }, ip: { perSecond: 0.01, burst: 3 }, signIn: { perSecond: 0.01, burst: 1 } } });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it("each 429 of the rate limiter is counted by bucket (scraped on the metrics port, which is not rate limited)", async () => {
    const scrapeLimited = async () => parseMetrics(await (await fetch(limited.metricsUrl as string, { headers: { authorization: `Bearer ${TOKEN}` } })).text());
    const before = await scrapeLimited();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await limited.api("/v1/healthz")).status);
    const refused = statuses.filter((s) => s === 429).length;
    expect(refused).toBeGreaterThan(0);
    const after = await scrapeLimited();
    expect(metricValue(after, "countersign_rate_limited_total", { bucket: "ip" })).toBe(metricValue(before, "countersign_rate_limited_total", { bucket: "ip" }) + refused);
  });
});

describe(`notification deliveries in /metrics (${testDbKind()})`, () => {
  const SECRET = "ops-metrics-hook-secret";
  let notified: TTestApp;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver(SECRET);
    const notify = parseNotifyConfig(
      {
        channels: { hook: { type: "webhook", url: `${receiver.url}/hook`, secretEnv: "OPS_METRICS_HOOK_SECRET" } },
        groups: { oncall: ["oncall@example.test"] },
        rules: [{ kinds: ["approval"], notify: ["oncall"], channels: ["hook"] }],
        retry: { baseMs: 100, maxAttempts: 4, jitter: false },
        pollMs: 50,
        // Generous: a slow answer of the receiver on a loaded machine must not become a failed attempt.
        timeoutMs: 30_000,
      },
      { OPS_METRICS_HOOK_SECRET: SECRET },
    );
    notified = await startTestApp({ notify, metricsToken: TOKEN });
  });
  afterAll(async () => {
    await notified?.close();
    await receiver?.close();
  });

  it("each delivery attempt is counted by channel, and each failed one as a failure too", async () => {
    const scrapeNotified = async () => parseMetrics(await (await notified.api("/metrics", { key: TOKEN })).text());
    const before = await scrapeNotified();
    receiver.failNext("/hook", 500);
    const user = await notified.user("member");
    await invokeApproval(notified, user.apiKey, "echo notify");
    await until("a delivered webhook", async () => (receiver.received.some((r) => r.path === "/hook" && r.answered === 200) ? true : null));
    // The attempt is counted once its answer is back: wait for the second one.
    const attemptsOf = (samples: ReturnType<typeof parseMetrics>) => metricValue(samples, "countersign_notification_attempts_total", { channel: "hook" }) - metricValue(before, "countersign_notification_attempts_total", { channel: "hook" });
    const after = await until("the second attempt counted", async () => {
      const now = await scrapeNotified();
      return attemptsOf(now) >= 2 ? now : null;
    });
    // No delivery to the hook is pending any more (each attempt is counted before its outcome is
    // stored): no further attempt can come, so the count is final.
    await until("no delivery to the hook pending", async () => (Number((await rows<{ n: number | string }>(notified, "select count(*) as n from notifications where channel = 'hook' and status = 'pending'"))[0]?.n) === 0 ? true : null));
    const attempts = attemptsOf(await scrapeNotified());
    const failures = metricValue(after, "countersign_notification_failures_total", { channel: "hook" }) - metricValue(before, "countersign_notification_failures_total", { channel: "hook" });
    expect(receiver.received.filter((r) => r.path === "/hook").length).toBe(2);
    expect(attempts).toBe(2);
    expect(failures).toBe(1);
  });
});
