import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { parseNotifyConfig } from "../../server/notify/config";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { getResponse, invoke, invokeApproval, ok200, rows, script, waitUntil } from "./helpers";
import { emailOf, linkToken, startReceiver, startSmtpSink, type TReceived, type TSinkMail, type TSmtpSink, trpcPublic } from "./notify-helpers";
import { askScript, trpcQuery } from "./questions-helpers";

const HOOK_SECRET = "whsec-test-0123456789abcdef";
const API_SECRET = "sk-live-9c1f4e2a7b3d5e6f8a0b1c2d";
const CARD = "4242424242424242";
const SECRET_ANSWER = "hunter2-correct-horse-battery";

let app: TTestApp;
let sink: TSmtpSink;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let owner: TTestUser;
let olga: TTestUser;
let otto: TTestUser;
let sam: TTestUser;
let member: TTestUser;

beforeAll(async () => {
  sink = await startSmtpSink();
  receiver = await startReceiver(HOOK_SECRET);
  const notify = parseNotifyConfig(
    {
      smtp: { host: "127.0.0.1", port: sink.smtpPort, from: "countersign@example.test" },
      channels: {
        hook: { type: "webhook", url: `${receiver.url}/hook`, secretEnv: "TEST_NOTIFY_HOOK_SECRET" },
        chat: { type: "slack", url: `${receiver.url}/slack` },
        mail: { type: "email" },
      },
      groups: { oncall: [emailOf("Olga Notify"), emailOf("Otto Notify"), "nobody@example.test"], security: [emailOf("Sam Security")] },
      rules: [
        { agents: ["scripted"], kinds: ["approval"], notify: ["oncall"], channels: ["hook", "chat", "mail"] },
        { risks: ["high"], notify: ["security"], channels: ["mail"] },
        { kinds: ["question"], notify: ["oncall"], channels: ["hook", "mail"] },
      ],
      retry: { baseMs: 150, maxAttempts: 4, jitter: false },
      pollMs: 50,
      // Generous: a slow answer on a loaded machine must not become one more (failed) attempt.
      timeoutMs: 30_000,
    },
    { TEST_NOTIFY_HOOK_SECRET: HOOK_SECRET },
  );
  app = await startTestApp({ notify });
  [owner, olga, otto, sam, member] = await Promise.all([
    app.user("member", "Nora Owner"),
    app.user("operator", "Olga Notify"),
    app.user("operator", "Otto Notify"),
    app.user("admin", "Sam Security"),
    app.user("member", "Mia Member"),
  ]);
});
afterEach(() => app?.clock.reset());
afterAll(async () => {
  await app?.close();
  await receiver?.close();
  await sink?.stop();
});

const hooksFor = (id: string, path = "/hook") => receiver.received.filter((r) => r.path === path && r.body.includes(id));
const mailsFor = async (id: string) => (await sink.mails()).filter((m) => m.text.includes(id) || m.subject.includes(id) || m.html.includes(id));
const mailsAbout = async (needle: string) => (await sink.mails()).filter((m) => m.text.includes(needle));
const bodiesOf = (received: TReceived[], mails: TSinkMail[]) => [...received.map((r) => r.body), ...mails.map((m) => `${m.subject}\n${m.text}\n${m.html}`)].join("\n");

type TLogRow = { id: string; status: string; attempts: number; channel: string; recipient: string; subjectId: string; lastError: string | null };
const logFor = async (key: string, subjectId: string) => {
  const { status, body } = await trpcQuery(app, key, "notifications.list", { subjectId, limit: 50 });
  expect(status, JSON.stringify(body)).toBe(200);
  return (body.result?.data as unknown as { rows: TLogRow[] } | undefined)?.rows ?? [];
};

describe(`Notifications (${testDbKind()})`, () => {
  it("webhook: signed, retried with backoff after a 500 and a reset, logged attempt by attempt; Slack gets text with a sign-in link; no secret anywhere", async () => {
    receiver.failNext("/hook", 500, "reset");
    // A private client input first (card details), then a command holding a secret-looking token.
    const first = await invoke(app, owner.apiKey, script([{ toolCalls: [{ name: "collect_card_details", arguments: {} }] }, { toolCalls: [{ name: "exec", arguments: { command: `export API_TOKEN=${API_SECRET} && echo deployed` } }] }, { text: "done" }]));
    const clientToolId = (first.requiredAction as { id: string }).id;
    const next = await ok200(await app.api(`/v1/client-tools/${clientToolId}`, { key: owner.apiKey, body: { output: { number: CARD, expiry: "12/30", name: "Nora Cardholder" } } }));
    expect(next.status).toBe("requires_action");
    const approvalId = (next.requiredAction as { id: string }).id;

    const delivered = await waitUntil(() => hooksFor(approvalId).find((r) => r.answered === 200), 30_000, "webhook delivery");
    const hooks = hooksFor(approvalId);
    expect(hooks.map((h) => h.answered)).toEqual([500, "reset", 200]);
    for (const h of hooks) {
      expect(h.verified, "every delivery carries a valid signature").toBe(true);
      expect(h.headers["x-countersign-event"]).toBe("approval.requested");
      expect(h.headers["x-countersign-delivery"]).toBe(delivered.headers["x-countersign-delivery"]);
    }
    // Exponential backoff: base 150 ms, then 300 ms.
    expect((hooks[1] as TReceived).at - (hooks[0] as TReceived).at).toBeGreaterThanOrEqual(130);
    expect((hooks[2] as TReceived).at - (hooks[1] as TReceived).at).toBeGreaterThanOrEqual(280);
    const body = JSON.parse(delivered.body) as Record<string, unknown>;
    expect(body).toMatchObject({ id: delivered.headers["x-countersign-delivery"], type: "approval.requested", subject: { kind: "approval", id: approvalId, agent: "scripted", risk: "medium" } });
    expect((body.links as { console: string }).console).toBe(`${app.url}/approvals?focus=${approvalId}`);

    const slack = await waitUntil(() => hooksFor(approvalId, "/slack")[0], 30_000, "slack message");
    const message = JSON.parse(slack.body) as { text: string; blocks: Array<{ type: string }> };
    expect(message.text).toContain(`<${app.url}/approvals?focus=${approvalId}|Review and decide in Countersign>`);
    // A channel without a signing secret gets no buttons, only the link.
    expect(message.blocks.map((b) => b.type)).not.toContain("actions");

    // The delivery log: the webhook row delivered on its third attempt, each attempt recorded.
    const log = await waitUntil(async () => {
      const all = await logFor(olga.apiKey, approvalId);
      return all.length >= 4 && all.every((r) => r.status !== "pending") ? all : null;
    }, 30_000, "delivery log");
    const hookRow = log.find((r) => r.channel === "hook") as TLogRow;
    expect(hookRow).toMatchObject({ status: "delivered", attempts: 3, recipient: "hook" });
    const attempts = await trpcQuery(app, olga.apiKey, "notifications.attempts", { notificationId: hookRow.id });
    const tries = attempts.body.result?.data as unknown as Array<{ attempt: number; ok: boolean; statusCode: number | null; error: string | null }>;
    expect(tries.map((t) => [t.attempt, t.ok, t.statusCode])).toEqual([[1, false, 500], [2, false, null], [3, true, 200]]);
    expect(tries[1]?.error).toBeTruthy();
    // Email went to both on-call operators; the address without a user was skipped; not to the high-risk group.
    expect(log.filter((r) => r.channel === "mail").map((r) => r.recipient).sort()).toEqual([emailOf("Olga Notify"), emailOf("Otto Notify")]);
    expect(app.logs()).toContain("nobody@example.test");

    const mails = await waitUntil(async () => ((await mailsFor(approvalId)).length >= 2 ? mailsFor(approvalId) : null), 30_000, "mails");
    const everything = bodiesOf(hooksFor(approvalId).concat(hooksFor(approvalId, "/slack")), mails);
    for (const secret of [API_SECRET, CARD, "Nora Cardholder", HOOK_SECRET]) expect(everything).not.toContain(secret);
    expect(everything).toContain("API_TOKEN=[redacted]");

    // Members may not read the log.
    expect((await trpcQuery(app, member.apiKey, "notifications.list", { limit: 10 })).status).toBe(403);
  });

  it("email: each person gets a single-use link; it works once (the run resumes), a second use and another person's later use fail clearly", async () => {
    const { env, approval } = await invokeApproval(app, owner.apiKey, "echo shipped", { followedBy: [{ text: "All shipped." }] });
    const mails = await waitUntil(async () => ((await mailsFor(approval.id)).length >= 2 ? mailsFor(approval.id) : null), 30_000, "mails");
    expect(mails.map((m) => m.to[0]).sort()).toEqual([emailOf("Olga Notify"), emailOf("Otto Notify")]);
    const olgaMail = mails.find((m) => m.to[0] === emailOf("Olga Notify")) as TSinkMail;
    const ottoMail = mails.find((m) => m.to[0] === emailOf("Otto Notify")) as TSinkMail;
    expect(olgaMail.text).toContain(`${app.url}/l/`);
    expect(olgaMail.text).toContain("This link works once");
    // What is approved: the action, the arguments, the risk, who asked, the reviewer's verdict.
    const [asked] = await rows<{ risk: string }>(app, `select risk from approvals where id = '${approval.id}'`);
    expect(olgaMail.text).toContain(`Action: tool:exec (tool exec)\nRisk: ${asked?.risk}\nAgent: scripted\nRequested by: Nora Owner (${emailOf("Nora Owner")})\n`);
    expect(olgaMail.text).toContain("Reviewer: No reviewer looked at it; a person decides.");
    expect(olgaMail.text).toContain("Arguments:\ncommand: echo shipped\n");
    expect(olgaMail.html).toContain("<p>command:</p><pre>echo shipped</pre>");
    const token = linkToken(olgaMail);
    expect(linkToken(ottoMail)).not.toBe(token);

    // Looking does not use the link up.
    for (let i = 0; i < 2; i++) {
      const view = await trpcPublic(app, "query", "link.get", { token });
      expect(view.status, JSON.stringify(view.body)).toBe(200);
      expect(view.body.result?.data).toMatchObject({ recipient: { name: "Olga Notify" }, subject: { kind: "approval", id: approval.id, status: "pending", arguments: { command: "echo shipped" }, complete: true } });
    }
    const decided = await trpcPublic(app, "mutation", "link.decide", { token, decision: "approve" });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    const done = await waitUntil(async () => {
      const e = await ok200(await getResponse(app, owner.apiKey, env.id, env.sessionId));
      return e.status === "completed" ? e : null;
    }, 30_000, "run completed");
    expect(done.outputText).toContain("All shipped.");
    const [row] = await rows<{ decided_by: string; decided_via: string }>(app, `select decided_by, decided_via from approvals where id = '${approval.id}'`);
    expect(row).toEqual({ decided_by: olga.userId, decided_via: "link" });
    expect(row?.decided_by).not.toBe(otto.userId);

    const again = await trpcPublic(app, "mutation", "link.decide", { token, decision: "deny" });
    expect(again.status).toBe(409);
    expect(again.body.error?.data.domainCode).toBe("already_submitted");
    expect(again.body.error?.message).toMatch(/already used/);
    expect((await trpcPublic(app, "query", "link.get", { token })).status).toBe(409);
    const late = await trpcPublic(app, "mutation", "link.decide", { token: linkToken(ottoMail), decision: "deny" });
    expect(late.status).toBe(409);
    expect(late.body.error?.data.domainCode).toBe("already_decided");
    expect((await rows<{ status: string }>(app, `select status from approvals where id = '${approval.id}'`))[0]?.status).toBe("approved");
  });

  it("bad links change nothing: unknown, malformed, expired and wrong-kind tokens get clear errors", async () => {
    // The approval waits an hour: its link (15 minutes) expires first.
    const { approval, env } = await invokeApproval(app, owner.apiKey, "echo later", { approvalTtlMs: 60 * 60 * 1000 });
    const [mail] = await waitUntil(async () => ((await mailsFor(approval.id)).length >= 2 ? mailsFor(approval.id) : null), 30_000, "mails");
    const token = linkToken(mail as TSinkMail);
    // What a link request could change: this run's trajectory, its approval, used links. (Not whole-table
    // counts: moving the clock 15 minutes expires other tests' approvals whenever the sweep runs.)
    const state = async () => ({
      frames: await rows(app, `select count(*)::int as n from response_events where response_id = '${env.id}' and frame_seq is not null`),
      approval: await rows(app, `select status, decided_by, decided_via from approvals where id = '${approval.id}'`),
      used: (await rows(app, "select id from link_tokens where used_at is not null")).length,
    });
    const before = await state();

    const unknown = await trpcPublic(app, "mutation", "link.decide", { token: "A".repeat(43), decision: "approve" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error?.message).toMatch(/not valid.*sign in/i);
    const malformed = await trpcPublic(app, "mutation", "link.decide", { token: "short", decision: "approve" });
    expect(malformed.status).toBe(400);
    const wrongKind = await trpcPublic(app, "mutation", "link.answer", { token, answers: { x: ["y"] } });
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.error?.message).toMatch(/for an approval/);

    // The link outlives its time (15 minutes by default) on the server's clock.
    app.clock.advance(15 * 60 * 1000 + 1000);
    const expired = await trpcPublic(app, "mutation", "link.decide", { token, decision: "approve" });
    expect(expired.status).toBe(409);
    expect(expired.body.error?.data.domainCode).toBe("expired");
    expect(expired.body.error?.message).toMatch(/expired/);
    expect((await trpcPublic(app, "query", "link.get", { token })).body.error?.data.domainCode).toBe("expired");

    expect(await state()).toEqual(before);
    expect((await rows<{ status: string }>(app, `select status from approvals where id = '${approval.id}'`))[0]?.status).toBe("pending");
  });

  it("routing by risk: a high-risk approval also reaches the security group; a medium one never did", async () => {
    const { approval } = await invokeApproval(app, owner.apiKey, "rm -rf ./build");
    const mails = await waitUntil(async () => ((await mailsFor(approval.id)).length >= 3 ? mailsFor(approval.id) : null), 30_000, "mails");
    expect(mails.map((m) => m.to[0]).sort()).toEqual([emailOf("Olga Notify"), emailOf("Otto Notify"), emailOf("Sam Security")]);
    expect((await sink.mails()).filter((m) => m.to[0] === emailOf("Sam Security")).every((m) => m.text.includes(approval.id) || m.subject.includes("high risk"))).toBe(true);
    // Sam decides through the link (admin: may decide anyone's approval).
    const samMail = mails.find((m) => m.to[0] === emailOf("Sam Security")) as TSinkMail;
    expect((await trpcPublic(app, "mutation", "link.decide", { token: linkToken(samMail), decision: "deny" })).status).toBe(200);
    expect((await rows<{ status: string; decided_by: string }>(app, `select status, decided_by from approvals where id = '${approval.id}'`))[0]).toEqual({ status: "denied", decided_by: sam.userId });
  });

  it("a link can reply instead of a plain denial: the agent receives the message and the run goes on; arguments too long for its page are never approved there", async () => {
    const long = `echo prod-migration ${"--step=x ".repeat(500)}`;
    const { env, approval } = await invokeApproval(app, owner.apiKey, long, { followedBy: [{ text: "Using staging." }] });
    const mails = await waitUntil(async () => ((await mailsFor(approval.id)).length >= 1 ? mailsFor(approval.id) : null), 30_000, "mails");
    const token = linkToken(mails[0] as TSinkMail);
    const bad = await trpcPublic(app, "mutation", "link.decide", { token, decision: "approve", message: "hi" });
    expect(bad.status).toBe(400);
    // The page cannot show the whole command: it offers no approval, and an approval through the link is refused (the link still works).
    expect((await trpcPublic(app, "query", "link.get", { token })).body.result?.data).toMatchObject({ subject: { kind: "approval", complete: false } });
    const blind = await trpcPublic(app, "mutation", "link.decide", { token, decision: "approve" });
    expect(blind.status).toBe(409);
    expect(blind.body.error?.message).toMatch(/not shown on this page in full.*console/);
    const replied = await trpcPublic(app, "mutation", "link.decide", { token, decision: "deny", message: "use the staging database instead" });
    expect(replied.status).toBe(200);
    expect(replied.body.result?.data).toMatchObject({ decision: "deny", continues: true });
    const done = await waitUntil(async () => {
      const got = (await (await app.api(`/v1/responses/${env.id}?sessionId=${env.sessionId}`, { key: owner.apiKey })).json()) as { status: string; output: Array<{ type: string; output?: unknown }> };
      return got.status === "completed" ? got : null;
    });
    expect(done.output.find((i) => i.type === "tool_result")?.output).toMatchObject({ denied: true, reply: "use the staging database instead" });
    expect((await rows<{ reply_message: string; decided_via: string }>(app, `select reply_message, decided_via from approvals where id = '${approval.id}'`))[0]).toEqual({
      reply_message: "use the staging database instead",
      decided_via: "link",
    });
  });

  it("questions: notified without answers; answered once through the link; a secret answer never appears", async () => {
    const env = await invoke(app, owner.apiKey, askScript([{ id: "env", header: "Target", question: "Which environment?", options: [{ label: "staging" }, { label: "production" }] }], { more: [{ toolCalls: [{ name: "request_secret", arguments: { name: "deploy_key", prompt: "Paste the deploy key" } }] }, { text: "Deployed." }] }));
    expect(env.status).toBe("requires_action");
    const questionId = (env.requiredAction as { id: string }).id;
    const hook = await waitUntil(() => hooksFor(questionId).find((r) => r.answered === 200), 30_000, "question webhook");
    expect(JSON.parse(hook.body)).toMatchObject({ type: "question.requested", subject: { kind: "question", id: questionId, questions: [{ header: "Target", question: "Which environment?", options: ["staging", "production"] }] }, links: { console: `${app.url}/answer/${questionId}` } });
    const [mail] = await waitUntil(async () => ((await mailsAbout(questionId)).length >= 2 ? mailsAbout(questionId) : null), 30_000, "question mails");
    const bad = await trpcPublic(app, "mutation", "link.answer", { token: linkToken(mail as TSinkMail), answers: { nope: ["x"] } });
    expect(bad.status).toBe(422);
    // A refused answer gives the link back.
    const answered = await trpcPublic(app, "mutation", "link.answer", { token: linkToken(mail as TSinkMail), answers: { env: ["staging"] } });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);

    // The run goes on to the secret question: answer it through its own link.
    const secretQ = await waitUntil(async () => {
      const e = await ok200(await getResponse(app, owner.apiKey, env.id, env.sessionId));
      const id = (e.requiredAction as { id?: string } | null)?.id;
      return id && id !== questionId ? id : null;
    }, 30_000, "secret question");
    const [secretMail] = await waitUntil(async () => ((await mailsAbout(secretQ)).length >= 2 ? mailsAbout(secretQ) : null), 30_000, "secret question mails");
    expect((await trpcPublic(app, "mutation", "link.answer", { token: linkToken(secretMail as TSinkMail), answers: { deploy_key: [SECRET_ANSWER] } })).status).toBe(200);
    await waitUntil(async () => (await ok200(await getResponse(app, owner.apiKey, env.id, env.sessionId))).status === "completed", 30_000, "run completed");
    // Nothing is left to send (what the run's end enqueued is final too): every body there will be is here.
    await waitUntil(async () => Number((await rows<{ n: number | string }>(app, "select count(*) as n from notifications where status = 'pending'"))[0]?.n) === 0, 30_000, "every delivery to be final");
    expect(bodiesOf(receiver.received, await sink.mails())).not.toContain(SECRET_ANSWER);
    expect(app.logs()).not.toContain(SECRET_ANSWER);
  });
});
