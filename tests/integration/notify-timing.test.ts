import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { addUser } from "../../server/auth/users";
import { parseNotifyConfig, type TNotifyConfigInput } from "../../server/notify/config";
import { freePort, startServerProcess } from "../../server/testing/server-process";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { invokeApproval, rows, tableCounts, waitUntil } from "./helpers";
import { emailOf, linkToken, startReceiver, startSmtpSink, type TSinkMail, type TSmtpSink, trpcPublic, withTwoServers } from "./notify-helpers";

const SECRET = "whsec-timing-0123456789abcdef";

/**
 * The schedule, driven by the server's clock (app.clock.advance) rather than by waiting: no step
 * comes due by itself while a test runs, however slow the machine. Moves stay below the webhook
 * signature's 300 s tolerance (the receiver checks timestamps against its real clock).
 */
const TTL_MS = 240_000;
const ESCALATE_AFTER_MS = 60_000;
const REMIND_BEFORE_MS = 60_000;
const LINK_TTL_MS = 30_000;

let sink: TSmtpSink;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

const configFor = (extra: Partial<TNotifyConfigInput> = {}) =>
  parseNotifyConfig(
    {
      smtp: { host: "127.0.0.1", port: sink.smtpPort, from: "countersign@example.test" },
      channels: { hook: { type: "webhook", url: `${receiver.url}/hook`, secret: SECRET }, mail: { type: "email" } },
      groups: { oncall: [emailOf("Tia Oncall")], leads: [emailOf("Leo Lead")] },
      rules: [{ agents: ["scripted"], kinds: ["approval"], notify: ["oncall"], channels: ["hook", "mail"], remindBeforeMs: REMIND_BEFORE_MS, escalateAfterMs: ESCALATE_AFTER_MS, escalateTo: ["leads"] }],
      retry: { baseMs: 50, maxAttempts: 2, jitter: false },
      linkTtlMs: LINK_TTL_MS,
      pollMs: 25,
      // Generous: a slow answer on a loaded machine must not become a failed attempt.
      timeoutMs: 30_000,
      ...extra,
    },
    {},
  );

beforeAll(async () => {
  sink = await startSmtpSink();
  receiver = await startReceiver(SECRET);
});
afterAll(async () => {
  await receiver?.close();
  await sink?.stop();
});

const mailsAbout = async (id: string) => (await sink.mails()).filter((m) => m.text.includes(id));

describe(`Notification timing: reminder, escalation, link expiry, retries (${testDbKind()})`, () => {
  let app: TTestApp;
  let owner: TTestUser;
  let tia: TTestUser;
  beforeAll(async () => {
    app = await startTestApp({ notify: configFor() });
    [owner, tia] = await Promise.all([app.user("member", "Owen Owner"), app.user("operator", "Tia Oncall"), app.user("operator", "Leo Lead")]);
  });
  afterAll(async () => {
    await app?.close();
  });

  it("escalates to the second group after escalateAfterMs, reminds before expiry; an expired link fails and changes nothing", async () => {
    const { approval } = await invokeApproval(app, owner.apiKey, "echo hello", { approvalTtlMs: TTL_MS });
    const [created] = await rows<{ created_at: Date; expires_at: Date }>(app, `select created_at, expires_at from approvals where id = '${approval.id}'`);
    const createdAt = new Date(created?.created_at as Date).getTime();
    const expiresAt = new Date(created?.expires_at as Date).getTime();
    /** When each event was planned, on the server's clock. */
    const plannedAt = async (event: string) => new Date((await rows<{ created_at: Date }>(app, `select created_at from notification_plans where subject_id = '${approval.id}' and event = '${event}'`))[0]?.created_at as Date).getTime();
    try {
      const [first] = await waitUntil(async () => ((await mailsAbout(approval.id)).length >= 1 ? mailsAbout(approval.id) : null), 30_000, "request mail");
      expect(first?.to).toEqual([emailOf("Tia Oncall")]);
      // The link lives linkTtlMs from its sending (not as long as the approval); after that it fails clearly and nothing changes.
      const linkExpiresAt = Date.parse((first as TSinkMail).text.match(/works once, until (\S+)\. /)?.[1] ?? "");
      expect(linkExpiresAt).toBeGreaterThanOrEqual(createdAt + LINK_TTL_MS);
      expect(linkExpiresAt).toBeLessThan(expiresAt);
      app.clock.advance(linkExpiresAt - createdAt + 1000);
      const before = await tableCounts(app);
      const expired = await trpcPublic(app, "mutation", "link.decide", { token: linkToken(first as TSinkMail), decision: "approve" });
      expect(expired.status).toBe(409);
      expect(expired.body.error?.data.domainCode).toBe("expired");
      expect(expired.body.error?.message).toBe("This link has expired. Sign in to the console to decide or answer.");
      expect(await tableCounts(app)).toEqual(before);
      expect((await rows<{ status: string }>(app, `select status from approvals where id = '${approval.id}'`))[0]?.status).toBe("pending");

      // Past escalateAfterMs (on the server's clock): the escalation goes to the leads, planned no earlier.
      app.clock.reset();
      app.clock.advance(ESCALATE_AFTER_MS + 1000);
      const escalated = await waitUntil(async () => (await mailsAbout(approval.id)).find((m) => m.subject.startsWith("Escalated:")), 30_000, "escalation mail");
      expect(escalated.to).toEqual([emailOf("Leo Lead")]);
      expect(await plannedAt("escalation")).toBeGreaterThanOrEqual(createdAt + ESCALATE_AFTER_MS);
      // Within remindBeforeMs of the expiry: the reminder, planned no earlier.
      app.clock.reset();
      app.clock.advance(expiresAt - REMIND_BEFORE_MS - createdAt + 1000);
      const reminder = await waitUntil(async () => (await mailsAbout(approval.id)).find((m) => m.subject.startsWith("Reminder:")), 30_000, "reminder mail");
      expect(reminder.to).toEqual([emailOf("Tia Oncall")]);
      expect(await plannedAt("reminder")).toBeGreaterThanOrEqual(expiresAt - REMIND_BEFORE_MS);
      // The webhook of each event is a delivery of its own (it may land after the mail).
      const events = await waitUntil(() => {
        const seen = receiver.received.filter((r) => r.body.includes(approval.id)).map((r) => r.headers["x-countersign-event"]);
        return seen.length >= 3 ? seen : null;
      }, 30_000, "the three webhooks");
      expect(events).toEqual(["approval.requested", "approval.escalation", "approval.reminder"]);
      expect(receiver.received.every((r) => r.verified)).toBe(true);

      // The reminder's fresh link works (as Tia).
      const decided = await trpcPublic(app, "mutation", "link.decide", { token: linkToken(reminder), decision: "approve" });
      expect(decided.status, JSON.stringify(decided.body)).toBe(200);
      expect((await rows<{ decided_by: string }>(app, `select decided_by from approvals where id = '${approval.id}'`))[0]?.decided_by).toBe(tia.userId);
      const plans = await rows<{ event: string }>(app, `select event from notification_plans where subject_id = '${approval.id}' order by created_at`);
      expect(plans.map((p) => p.event)).toEqual(["requested", "escalation", "reminder"]);
    } finally {
      app.clock.reset();
    }
  });

  it("gives up after maxAttempts (status failed, every attempt logged); a delivery for a settled approval is skipped, visibly", async () => {
    receiver.failNext("/hook", 500, 500);
    // No escalation or reminder comes due while this test runs (its TTL and the rule's times are minutes).
    const { approval } = await invokeApproval(app, owner.apiKey, "echo failing", { approvalTtlMs: TTL_MS });
    const failed = await waitUntil(async () => {
      const [row] = await rows<{ id: string; status: string; attempts: number; last_error: string; last_status_code: number }>(app, `select id, status, attempts, last_error, last_status_code from notifications where subject_id = '${approval.id}' and channel = 'hook' and event = 'requested'`);
      return row?.status === "failed" ? row : null;
    }, 30_000, "failed delivery");
    expect(failed).toMatchObject({ attempts: 2, last_error: "HTTP 500", last_status_code: 500 });
    const attempts = await rows<{ attempt: number; ok: boolean; status_code: number }>(app, `select attempt, ok, status_code from notification_attempts where notification_id = '${failed.id}' order by attempt`);
    expect(attempts).toEqual([{ attempt: 1, ok: false, status_code: 500 }, { attempt: 2, ok: false, status_code: 500 }]);

    await app.api(`/v1/approvals/${approval.id}`, { key: tia.apiKey, body: { decision: "deny" } });
    // A delivery that comes due after the approval was settled is not sent.
    const sentBefore = receiver.received.length;
    await rows(app, `insert into notifications (id, subject_kind, subject_id, event, channel, channel_type, recipient, payload) values ('notif_skip_test', 'approval', '${approval.id}', 'reminder', 'hook', 'webhook', 'hook', '{}'::jsonb)`);
    const skipped = await waitUntil(async () => {
      const [row] = await rows<{ status: string; last_error: string }>(app, "select status, last_error from notifications where id = 'notif_skip_test'");
      return row?.status !== "pending" ? row : null;
    }, 30_000, "skipped delivery");
    expect(skipped).toEqual({ status: "failed", last_error: "skipped: the approval is already denied" });
    expect(receiver.received.length).toBe(sentBefore);
  });
});

describe(`Notification config at boot (${testDbKind()})`, () => {
  it("a bad file stops the server with an error naming the field", async () => {
    const dir = mkdtempSync(join(tmpdir(), "countersign-notify-"));
    try {
      const file = join(dir, "notify.json");
      writeFileSync(file, JSON.stringify({ channels: { hook: { type: "webhook", url: "not a url", secret: SECRET } }, rules: [{ channels: ["hook", "pager"] }] }));
      const error = await startServerProcess({ dataDir: join(dir, "data"), port: await freePort(), env: { COUNTERSIGN_NOTIFY_CONFIG: file } }).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toContain("server exited early (1)");
      expect(error?.message).toMatch(/channels\.hook\.url: .*rules\.0\.channels: unknown channel "pager"/s);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Two servers need one shared database: PostgreSQL only (on the PGlite pass this suite is not declared, rather than skipped).
const onPostgres = testDbKind() === "postgres" ? describe : () => {};
onPostgres("Two server instances on one PostgreSQL", () => {
  it("plan and deliver each notification exactly once", async () => {
    await withTwoServers(configFor({ rules: [{ kinds: ["approval"], notify: ["oncall"], channels: ["hook", "mail"] }] }), async (a, b, handleA) => {
      await addUser(handleA.db, a.deps.auth, { name: "Tia Oncall", role: "operator", password: "a-long-password-1" }).catch(() => null);
      const { apiKey } = await addUser(handleA.db, a.deps.auth, { name: "Pia Poster", role: "member" });
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${i % 2 ? a.url : b.url}/v1/responses`, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ input: { script: [{ toolCalls: [{ name: "exec", arguments: { command: `echo replica ${i}` } }] }, { text: "ok" }] } }),
        });
        ids.push(((await res.json()) as { requiredAction: { id: string } }).requiredAction.id);
      }
      await waitUntil(async () => {
        const all = await sink.mails();
        return ids.every((id) => all.some((m) => m.text.includes(id)) && receiver.received.some((r) => r.body.includes(id)));
      }, 30_000, "deliveries from both replicas");
      // Every delivery of these approvals has its outcome stored (after its one send): none is pending,
      // each was claimed (and so sent) once, so no late duplicate can still come.
      const outbox = await waitUntil(async () => {
        // rows() reads only the app's database handle.
        const all = await rows<{ subject_id: string; channel: string; status: string; attempts: number }>(a as unknown as TTestApp, `select subject_id, channel, status, attempts from notifications where subject_id in (${ids.map((id) => `'${id}'`).join(", ")})`);
        return all.length > 0 && all.every((n) => n.status !== "pending") ? all : null;
      }, 30_000, "every delivery to be final");
      expect(outbox.map((n) => [n.status, n.attempts])).toEqual(outbox.map(() => ["delivered", 1]));
      expect(outbox).toHaveLength(ids.length * 2);
      const mails = await sink.mails();
      for (const id of ids) {
        expect(receiver.received.filter((r) => r.body.includes(id)).length, `webhook deliveries of ${id}`).toBe(1);
        expect(mails.filter((m) => m.text.includes(id)).length, `mails of ${id}`).toBe(1);
      }
    });
  });
});
