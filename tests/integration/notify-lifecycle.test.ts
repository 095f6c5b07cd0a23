import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { addUser } from "../../server/auth/users";
import { parseNotifyConfig } from "../../server/notify/config";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, invoke, invokeApproval, ok200, rows, script, waitUntil } from "./helpers";
import { startReceiver, type TReceived, withTwoServers } from "./notify-helpers";
import { askScript, gwOk } from "./questions-helpers";

const SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const LIFECYCLE = ["approval.resolved", "question.resolved", "response.completed", "response.failed"];

let app: TTestApp;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let operator: TTestUser;

const configFor = () =>
  parseNotifyConfig(
    {
      channels: {
        life: { type: "webhook", url: `${receiver.url}/life`, secretEnv: "TEST_LIFECYCLE_SECRET", events: LIFECYCLE },
        // A channel that only wants failures gets nothing else.
        failures: { type: "webhook", url: `${receiver.url}/failures`, secretEnv: "TEST_LIFECYCLE_SECRET", events: ["response.failed"] },
      },
      retry: { baseMs: 100, maxAttempts: 4, jitter: false },
      pollMs: 50,
      // Generous: a slow answer on a loaded machine must not become a failed attempt (and a retry).
      timeoutMs: 30_000,
    },
    { TEST_LIFECYCLE_SECRET: SECRET },
  );

beforeAll(async () => {
  receiver = await startReceiver(SECRET);
  app = await startTestApp({ notify: configFor() });
  operator = await app.user("operator", "Olga Lifecycle");
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

type TEvent = { id: string; type: string; timestamp: string; data: Record<string, unknown> };
const headersOf = (r: TReceived): Record<string, string> => Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));
const parsed = (r: TReceived) => JSON.parse(r.body) as TEvent;
/** Deliveries on `path` about `subjectId` of this type (every attempt, failed ones included). */
const attempts = (type: string, subjectId: string, path = "/life") => receiver.received.filter((r) => r.path === path && parsed(r).type === type && JSON.stringify(parsed(r).data).includes(subjectId));
const deliveredOnce = (type: string, subjectId: string, path = "/life") => waitUntil(() => attempts(type, subjectId, path).find((r) => r.answered === 200), 30_000, `${type} for ${subjectId}`);
/**
 * Until no delivery is pending: lifecycle deliveries are enqueued in the transaction of their state
 * change, so once every one is final (sent, or given up), no further attempt can come.
 */
const settle = (on: TTestApp = app) =>
  waitUntil(async () => Number((await rows<{ n: number | string }>(on, "select count(*) as n from notifications where status = 'pending'"))[0]?.n) === 0, 30_000, "every delivery to be final");

describe(`Lifecycle webhooks (${testDbKind()})`, () => {
  it("approval.resolved and response.completed arrive once each, verify with standardwebhooks, keep their webhook-id across a retry; a tampered body fails", async () => {
    receiver.failNext("/life", 500);
    const { env, approval } = await invokeApproval(app, operator.apiKey, "echo lifecycle", { followedBy: [{ text: "All done." }] });
    expect((await ok200(await decide(app, operator.apiKey, approval.id, "approve"))).status).toBe("completed");

    const resolved = await deliveredOnce("approval.resolved", approval.id);
    const completed = await deliveredOnce("response.completed", env.id);
    await settle();
    const wh = new Webhook(SECRET);
    for (const r of [resolved, completed]) {
      const verified = wh.verify(r.body, headersOf(r)) as TEvent;
      expect(verified.id).toBe(r.headers["webhook-id"]);
      expect(r.headers["x-countersign-event"]).toBe(verified.type);
      expect(() => wh.verify(r.body.replace(/"status":"[a-z]+"/, '"status":"denied"'), headersOf(r))).toThrow();
      expect(() => new Webhook(`whsec_${randomBytes(32).toString("base64")}`).verify(r.body, headersOf(r))).toThrow();
    }
    expect(parsed(resolved)).toMatchObject({
      type: "approval.resolved",
      data: { approvalId: approval.id, responseId: env.id, agent: "scripted", status: "approved", decidedBy: { userId: operator.userId, name: "Olga Lifecycle", email: operator.email }, via: "http", edited: false, replied: false },
    });
    expect(parsed(completed)).toMatchObject({ type: "response.completed", data: { responseId: env.id, sessionId: env.sessionId, status: "completed" } });
    expect(completed.body).not.toContain("All done.");
    // The first attempt failed (500) and was retried with the same webhook-id: one event, one id.
    const all = [...attempts("approval.resolved", approval.id), ...attempts("response.completed", env.id)];
    expect(all.map((r) => r.answered).sort()).toEqual([200, 200, 500]);
    expect(new Set(attempts("approval.resolved", approval.id).map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(new Set(attempts("response.completed", env.id).map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(attempts("approval.resolved", approval.id).filter((r) => r.answered === 200)).toHaveLength(1);
    expect(attempts("response.completed", env.id).filter((r) => r.answered === 200)).toHaveLength(1);
    // Not subscribed: the failures channel saw neither.
    expect(receiver.received.filter((r) => r.path === "/failures" && r.body.includes(env.id))).toEqual([]);
  });

  it("question.resolved carries who and how, never the answer; a denied approval is resolved without a response.completed", async () => {
    const env = await invoke(app, operator.apiKey, askScript([{ id: "env", header: "Target", question: "Which environment?", options: [{ label: "staging-zeta" }, { label: "production" }] }]));
    const questionId = (env.requiredAction as { id: string }).id;
    await gwOk(app, operator.apiKey, "question.resolve", { id: questionId, answers: { env: ["staging-zeta"] } });
    const answered = await deliveredOnce("question.resolved", questionId);
    expect(new Webhook(SECRET).verify(answered.body, headersOf(answered))).toMatchObject({ type: "question.resolved", data: { questionId, status: "answered", resolvedBy: { userId: operator.userId }, via: "http" } });
    expect(answered.body).not.toContain("staging-zeta");
    await deliveredOnce("response.completed", env.id);

    const denied = await invokeApproval(app, operator.apiKey, "echo never");
    expect((await ok200(await decide(app, operator.apiKey, denied.approval.id, "deny"))).status).toBe("denied");
    expect(parsed(await deliveredOnce("approval.resolved", denied.approval.id)).data).toMatchObject({ status: "denied", via: "http" });
    await settle();
    expect(receiver.received.filter((r) => r.body.includes(denied.env.id) && parsed(r).type.startsWith("response."))).toEqual([]);
    expect(attempts("question.resolved", questionId)).toHaveLength(1);
  });

  it("an approval nobody decides is resolved as expired by the system", async () => {
    const { approval } = await invokeApproval(app, operator.apiKey, "echo too-late", { approvalTtlMs: 1000 });
    const expired = await deliveredOnce("approval.resolved", approval.id);
    expect(new Webhook(SECRET).verify(expired.body, headersOf(expired))).toMatchObject({ data: { approvalId: approval.id, status: "expired", via: "system", decidedBy: null } });
  });

  it("response.failed reaches both subscribed channels once, with the error code", async () => {
    const env = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "get_page_context" }] }, { text: "never" }], { clientToolTtlMs: 1000 }));
    expect(env.status).toBe("requires_action");
    const failed = await deliveredOnce("response.failed", env.id);
    const failedToo = await deliveredOnce("response.failed", env.id, "/failures");
    await settle();
    for (const r of [failed, failedToo]) {
      expect(new Webhook(SECRET).verify(r.body, headersOf(r))).toMatchObject({ type: "response.failed", data: { responseId: env.id, status: "failed", error: { code: "client_tool_expired" } } });
    }
    expect(failed.headers["webhook-id"]).not.toBe(failedToo.headers["webhook-id"]);
    expect(attempts("response.failed", env.id)).toHaveLength(1);
    expect(attempts("response.failed", env.id, "/failures")).toHaveLength(1);
  });
});

// Two servers need one shared database: PostgreSQL only (on the PGlite pass this suite is not declared, rather than skipped).
const onPostgres = testDbKind() === "postgres" ? describe : () => {};
onPostgres("Lifecycle webhooks from two server instances on one PostgreSQL", () => {
  it("the same approval decided on both at once: one decision, one approval.resolved, one response.completed", async () => {
    await withTwoServers(configFor(), async (a, b, handleA) => {
      const { apiKey } = await addUser(handleA.db, a.deps.auth, { name: "Rita Replica", role: "operator" });
      const runs: Array<{ responseId: string; approvalId: string }> = [];
      for (let i = 0; i < 4; i++) {
        const res = await fetch(`${i % 2 ? a.url : b.url}/v1/responses`, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ input: { script: [{ toolCalls: [{ name: "exec", arguments: { command: `echo replica-${i}` } }] }, { text: "ok" }] } }),
        });
        const env = (await res.json()) as { id: string; requiredAction: { id: string } };
        runs.push({ responseId: env.id, approvalId: env.requiredAction.id });
      }
      for (const run of runs) {
        const statuses = await Promise.all(
          [a, b].map(async (server) => (await fetch(`${server.url}/v1/approvals/${run.approvalId}`, { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body: JSON.stringify({ decision: "approve" }) })).status),
        );
        expect(statuses.sort()).toEqual([200, 409]);
      }
      for (const run of runs) {
        await deliveredOnce("approval.resolved", run.approvalId);
        await deliveredOnce("response.completed", run.responseId);
      }
      // rows() reads only the app's database handle.
      await settle(a as unknown as TTestApp);
      for (const run of runs) {
        expect(attempts("approval.resolved", run.approvalId), `approval.resolved of ${run.approvalId}`).toHaveLength(1);
        expect(attempts("response.completed", run.responseId), `response.completed of ${run.responseId}`).toHaveLength(1);
      }
    });
  });
});
