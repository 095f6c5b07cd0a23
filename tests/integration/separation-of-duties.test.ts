import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { testDbKind } from "../../db/testing";
import { parseNotifyConfig } from "../../server/notify/config";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, expectError, getResponse, LiveClient, lineCount, ok200, waitUntil } from "./helpers";
import { emailOf, linkToken, startSmtpSink, type TSinkMail, type TSmtpSink, trpcPublic } from "./notify-helpers";
import { approvalRow, consoleDecide, consoleDecideMany, decisionState, inboxRow, SOD_AGENTS, startRun, votesOn } from "./separation-helpers";
import { trpcPost } from "./security-helpers";

const OWN_RUN = 'You started this run; the agent "scripted" requires another person to approve it.';

let app: TTestApp;
let sink: TSmtpSink;
let mia: TTestUser; // member: starts runs
let olga: TTestUser; // operator
let lena: TTestUser; // operator who gets demoted
let ada: TTestUser; // admin
let otto: TTestUser; // operator

beforeAll(async () => {
  sink = await startSmtpSink();
  const notify = parseNotifyConfig({
    smtp: { host: "127.0.0.1", port: sink.smtpPort, from: "countersign@example.test" },
    channels: { mail: { type: "email" } },
    // The requester is named too: it must get the console link, never a decision link for its own run.
    rules: [{ agents: ["scripted"], kinds: ["approval"], notify: [emailOf("Mia Member"), emailOf("Olga Operator"), emailOf("Lena Linkop")], channels: ["mail"] }],
    retry: { baseMs: 150, maxAttempts: 3, jitter: false },
    pollMs: 50,
    // Generous: a slow answer of the mail sink on a loaded machine must not become a failed attempt (and a resend).
    timeoutMs: 30_000,
  });
  app = await startTestApp({ agents: SOD_AGENTS, notify });
  [mia, olga, lena, ada, otto] = await Promise.all([
    app.user("member", "Mia Member"),
    app.user("operator", "Olga Operator"),
    app.user("operator", "Lena Linkop"),
    app.user("admin", "Ada Admin"),
    app.user("operator", "Otto Operator"),
  ]);
});
afterAll(async () => {
  await app?.close();
  await sink?.stop();
});

/**
 * Watches what the server's spawner is asked to start from now on (until the test ends): how many
 * requests mention `needle`. "It did not run" is then a fact read at the spawner, not a file after a pause.
 */
function watchSpawns(needle: string): () => number {
  const spy = vi.spyOn(app.deps.sandbox.spawner, "run");
  onTestFinished(() => spy.mockRestore());
  const from = spy.mock.calls.length;
  return () => spy.mock.calls.slice(from).filter(([request]) => JSON.stringify(request).includes(needle)).length;
}

const mailsFor = async (approvalId: string) => (await sink.mails()).filter((m) => m.text.includes(approvalId));
const mailTo = (mails: TSinkMail[], name: string) => mails.find((m) => m.to[0] === emailOf(name)) as TSinkMail;

describe(`separation of duties: the attack (${testDbKind()})`, () => {
  it("a member cannot decide its own run's approval over HTTP, WebSocket, the console, bulk or AG-UI; nothing changes; an operator then can", async () => {
    const { env, approval, cwd } = await startRun(app, mia, "echo pwned >> attack.txt");
    const before = { state: await decisionState(app), row: await approvalRow(app, approval.id) };
    const attacks = watchSpawns("attack.txt");

    // HTTP: approve, deny, reply instead, edit, grant: every kind of decision is refused with the reason.
    for (const body of [{ decision: "approve" }, { decision: "deny" }, { decision: "deny", message: "do something else" }, { decision: "approve", arguments: { command: "id" } }, { decision: "approve", grant: "session" }]) {
      const err = await expectError(await app.api(`/v1/approvals/${approval.id}`, { key: mia.apiKey, body }), 403, "forbidden");
      expect(err.detail).toBe(OWN_RUN);
    }
    // WebSocket: an error frame with the reason; the socket stays open.
    const live = await LiveClient.open(app, mia.apiKey, { sessionId: env.sessionId });
    live.send({ type: "approval.decision", responseId: env.id, approvalId: approval.id, decision: "approve" });
    const frame = await live.waitFor((f) => f.type === "error");
    expect(frame).toMatchObject({ code: "forbidden", detail: OWN_RUN, responseId: env.id });
    expect(live.isOpen).toBe(true);
    live.close();
    // Console: one decision and a bulk decision.
    // The console also gets the reason as a code, to word it in the viewer's language.
    const ownRun = { code: "ownRun", params: { agent: "scripted" } };
    expect(await consoleDecide(app, { key: mia.apiKey }, approval.id, "approve")).toMatchObject({ status: 403, message: OWN_RUN, domainCode: "forbidden", serverText: ownRun });
    const bulk = await consoleDecideMany(app, { key: mia.apiKey }, [approval.id], "approve");
    expect(bulk).toMatchObject({ status: 403, domainCode: "forbidden", serverText: { code: "bulkNotYours", params: { n: 1 }, refusal: ownRun } });
    expect(bulk.message).toBe(`One of these approvals is not for you to decide, so nothing was decided: ${OWN_RUN}`);
    // AG-UI: resuming the thread's own interrupt is the same decision.
    const agui = await app.api("/v1/agui", { key: mia.apiKey, body: { threadId: env.sessionId, runId: "r-self", messages: [], resume: [{ interruptId: approval.id, status: "resolved", payload: { decision: "approve" } }] } });
    expect((await expectError(agui, 403, "forbidden")).detail).toBe(OWN_RUN);

    // The console says why instead of offering the buttons; an operator sees no refusal.
    expect((await inboxRow(app, { key: mia.apiKey }, approval.id))?.refusal).toBe(OWN_RUN);
    expect((await inboxRow(app, { key: olga.apiKey }, approval.id))?.refusal).toBeNull();

    // No refused decision started an attempt (that happens with the decision's commit) or asked for the command.
    expect(app.deps.host.isLocal(env.id)).toBe(false);
    expect(attacks()).toBe(0);
    expect(existsSync(join(cwd, "attack.txt"))).toBe(false);
    expect(await decisionState(app)).toEqual(before.state);
    expect(await approvalRow(app, approval.id)).toEqual(before.row);
    expect((await ok200(await getResponse(app, mia.apiKey, env.id, env.sessionId))).status).toBe("requires_action");

    // Legitimate: an operator approves the member's run; it runs once.
    const done = await ok200(await decide(app, olga.apiKey, approval.id, "approve"));
    expect(done).toMatchObject({ id: env.id, status: "completed", approvalId: approval.id });
    expect(lineCount(cwd, "attack.txt")).toBe(1);
    expect(await approvalRow(app, approval.id)).toMatchObject({ status: "approved", decidedBy: olga.userId, decidedVia: "http" });
  });

  it("email: the requester gets the console link, never a decision link for its own run; an operator's link decides", async () => {
    const { env, approval, cwd } = await startRun(app, mia, "echo mailed >> mail.txt");
    const mails = await waitUntil(async () => ((await mailsFor(approval.id)).length >= 3 ? mailsFor(approval.id) : null), 30_000, "three mails");
    const own = mailTo(mails, "Mia Member");
    expect(own.text).not.toMatch(/\/l\/[A-Za-z0-9_-]{43}/);
    expect(own.text).toContain(`/approvals?focus=${approval.id}`);
    const decided = await trpcPublic(app, "mutation", "link.decide", { token: linkToken(mailTo(mails, "Olga Operator")), decision: "approve" });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    await waitUntil(async () => (await ok200(await getResponse(app, mia.apiKey, env.id, env.sessionId))).status === "completed", 30_000, "run completed");
    expect(lineCount(cwd, "mail.txt")).toBe(1);
  });

  it("email: a link used after its holder may no longer decide is refused with the reason and changes nothing", async () => {
    // Lena (operator) may approve her own run on the demo agent, so her mail carries a link...
    const { env, approval, cwd } = await startRun(app, lena, "echo demoted >> link.txt");
    const mails = await waitUntil(async () => ((await mailsFor(approval.id)).length >= 3 ? mailsFor(approval.id) : null), 30_000, "three mails");
    const token = linkToken(mailTo(mails, "Lena Linkop"));
    // ...until an admin makes her a member: the rule is applied when the link is used.
    expect((await trpcPost(app, { key: ada.apiKey }, "admin.setRole", { userId: lena.userId, role: "member" })).status).toBe(200);
    const before = { state: await decisionState(app), row: await approvalRow(app, approval.id) };
    const refused = await trpcPublic(app, "mutation", "link.decide", { token, decision: "approve" });
    expect(refused.status).toBe(403);
    expect(refused.body.error?.message).toBe(OWN_RUN);
    expect(await decisionState(app)).toEqual(before.state);
    expect(await approvalRow(app, approval.id)).toEqual(before.row);
    expect(existsSync(join(cwd, "link.txt"))).toBe(false);
    await ok200(await decide(app, olga.apiKey, approval.id, "deny"));
    expect((await ok200(await getResponse(app, lena.apiKey, env.id, env.sessionId))).status).toBe("denied");
    expect((await trpcPost(app, { key: ada.apiKey }, "admin.setRole", { userId: lena.userId, role: "operator" })).status).toBe(200);
  });
});

describe(`separation of duties: selfApproval per agent (${testDbKind()})`, () => {
  it('"operators" (the default): an operator or admin approves its own run (the README\'s demo flow)', async () => {
    for (const who of [olga, ada]) {
      const { env, approval, cwd } = await startRun(app, who, "echo self >> self.txt");
      expect((await inboxRow(app, { key: who.apiKey }, approval.id))?.refusal).toBeNull();
      expect(await ok200(await decide(app, who.apiKey, approval.id, "approve"))).toMatchObject({ id: env.id, status: "completed" });
      expect(lineCount(cwd, "self.txt")).toBe(1);
    }
  });

  it('"never": the operator\'s own approval is refused (HTTP and bulk, the whole batch); another operator decides it', async () => {
    const own = await startRun(app, olga, "echo never >> never.txt", "sod-never");
    const others = await startRun(app, mia, "echo theirs >> theirs.txt", "sod-never");
    const reason = 'You started this run; the agent "sod-never" requires another person to approve it.';
    const before = await decisionState(app);
    expect((await expectError(await decide(app, olga.apiKey, own.approval.id, "approve"), 403, "forbidden")).detail).toBe(reason);
    const bulk = await consoleDecideMany(app, { key: olga.apiKey }, [others.approval.id, own.approval.id], "approve");
    expect(bulk).toMatchObject({ status: 403, message: `One of these approvals is not for you to decide, so nothing was decided: ${reason}` });
    expect(await decisionState(app)).toEqual(before);
    expect((await approvalRow(app, others.approval.id))?.status).toBe("pending");
    expect((await inboxRow(app, { key: olga.apiKey }, own.approval.id))?.refusal).toBe(reason);

    const bulkByAda = await consoleDecideMany(app, { key: ada.apiKey }, [others.approval.id, own.approval.id], "approve");
    expect(bulkByAda.status, JSON.stringify(bulkByAda)).toBe(200);
    await waitUntil(async () => lineCount(own.cwd, "never.txt") === 1 && lineCount(others.cwd, "theirs.txt") === 1, 30_000, "both ran");
  });

  it('"always": a member approves its own run', async () => {
    const { env, approval, cwd } = await startRun(app, mia, "echo always >> always.txt", "sod-always");
    expect((await inboxRow(app, { key: mia.apiKey }, approval.id))?.refusal).toBeNull();
    expect(await ok200(await decide(app, mia.apiKey, approval.id, "approve"))).toMatchObject({ id: env.id, status: "completed" });
    expect(lineCount(cwd, "always.txt")).toBe(1);
  });
});

/** A high-risk command (it matches the destructive pattern) that only touches the workspace. */
const HIGH = (file: string) => `mkdir -p scratch && rm -rf scratch && echo ran >> ${file}`;

describe(`separation of duties: quorum for high risk (${testDbKind()})`, () => {
  it("2 approvers: the requester never counts; the first vote is 202 pending, a repeat 409; the second approver runs it once", async () => {
    const { env, approval, cwd } = await startRun(app, mia, HIGH("quorum.txt"), "sod-quorum");
    expect(approval).toMatchObject({ risk: "high", requiredApprovals: 2 });
    const requester = await expectError(await decide(app, mia.apiKey, approval.id, "approve"), 403, "forbidden");
    expect(requester.detail).toBe("You started this run; this approval needs 2 approvals from other people, and its requester never counts.");
    // Edits and standing grants are refused on a quorum approval; nothing changes.
    const before = await decisionState(app);
    for (const extra of [{ arguments: { command: "echo edited" } }, { grant: "session" }]) {
      const err = await expectError(await app.api(`/v1/approvals/${approval.id}`, { key: olga.apiKey, body: { decision: "approve", ...extra } }), 422, "validation_failed");
      expect(err.detail).toBe("This approval needs 2 approvals from different people, so it cannot be edited or carry a standing grant; approve it as asked or deny it.");
    }
    expect(await decisionState(app)).toEqual(before);

    const runs = watchSpawns("quorum.txt");
    const first = await decide(app, olga.apiKey, approval.id, "approve");
    expect(first.status).toBe(202);
    expect(await first.json()).toEqual({ id: approval.id, status: "pending", approvals: 1, requiredApprovals: 2 });
    // The first vote resumed nothing: no attempt (it would start with the vote's commit), no command asked for.
    expect(app.deps.host.isLocal(env.id)).toBe(false);
    expect(runs()).toBe(0);
    expect((await ok200(await getResponse(app, mia.apiKey, env.id, env.sessionId))).status).toBe("requires_action");
    expect(existsSync(join(cwd, "quorum.txt"))).toBe(false);
    for (const again of ["approve", "deny"] as const) {
      expect((await expectError(await decide(app, olga.apiKey, approval.id, again), 409, "conflict")).detail).toMatch(/already voted/);
    }
    // The console shows the progress and who voted (the name with the email beside it); Olga is not offered a second vote.
    const seen = await inboxRow(app, { key: otto.apiKey }, approval.id);
    expect(seen).toMatchObject({ requiredApprovals: 2, refusal: null, votes: [{ userId: olga.userId, name: "Olga Operator", email: olga.email, decision: "approve", via: "http" }] });

    const done = await ok200(await decide(app, otto.apiKey, approval.id, "approve"));
    expect(done).toMatchObject({ id: env.id, status: "completed", approvalId: approval.id });
    expect(lineCount(cwd, "quorum.txt")).toBe(1);
    expect(await approvalRow(app, approval.id)).toMatchObject({ status: "approved", decidedBy: otto.userId, requiredApprovals: 2 });
    expect(await votesOn(app, approval.id)).toEqual([
      { user_id: olga.userId, decision: "approve", via: "http" },
      { user_id: otto.userId, decision: "approve", via: "http" },
    ]);
    // The HTTP API's error body keeps its contract (exactly code and detail); the console's tRPC error adds the reason's code.
    await expectError(await decide(app, ada.apiKey, approval.id, "approve"), 409, "already_decided");
    expect(await consoleDecide(app, { key: ada.apiKey }, approval.id, "deny")).toMatchObject({
      status: 409,
      domainCode: "already_decided",
      message: "This approval was already approved; a decision is used once.",
      serverText: { code: "alreadyDecided", params: { status: "approved" } },
    });
  });

  it("a vote over the WebSocket gets approval.voted; the console's vote completes it", async () => {
    const { env, approval, cwd } = await startRun(app, mia, HIGH("ws.txt"), "sod-quorum");
    const live = await LiveClient.open(app, olga.apiKey);
    live.send({ type: "approval.decision", responseId: env.id, approvalId: approval.id, decision: "approve" });
    const voted = await live.waitFor((f) => f.type === "approval.voted");
    expect(voted).toMatchObject({ responseId: env.id, approvalId: approval.id, decision: "approve", status: "pending", approvals: 1, requiredApprovals: 2 });
    live.close();
    const last = await consoleDecide(app, { key: ada.apiKey }, approval.id, "approve");
    expect(last).toMatchObject({ status: 200, data: { settled: true, approvals: 2, requiredApprovals: 2 } });
    await waitUntil(async () => (await ok200(await getResponse(app, mia.apiKey, env.id, env.sessionId))).status === "completed", 30_000, "run completed");
    expect(lineCount(cwd, "ws.txt")).toBe(1);
  });

  it("one approver's denial denies it, also after another approved", async () => {
    for (const approveFirst of [false, true]) {
      const { env, approval, cwd } = await startRun(app, mia, HIGH("denied.txt"), "sod-quorum");
      if (approveFirst) expect((await decide(app, olga.apiKey, approval.id, "approve")).status).toBe(202);
      expect(await ok200(await decide(app, otto.apiKey, approval.id, "deny"))).toEqual({ id: approval.id, status: "denied" });
      expect((await ok200(await getResponse(app, mia.apiKey, env.id, env.sessionId))).status).toBe("denied");
      expect(await approvalRow(app, approval.id)).toMatchObject({ status: "denied", decidedBy: otto.userId });
      expect(existsSync(join(cwd, "denied.txt"))).toBe(false);
    }
  });

  it("three approvers at once: one vote pends, one settles, one is too late; the command runs exactly once", async () => {
    for (let round = 0; round < 3; round++) {
      const { env, approval, cwd } = await startRun(app, mia, HIGH("race.txt"), "sod-quorum");
      const runs = watchSpawns("race.txt");
      const answers = await Promise.all([olga, otto, ada].map((u) => decide(app, u.apiKey, approval.id, "approve")));
      expect(answers.map((r) => r.status).sort()).toEqual([200, 202, 409]);
      // The 200 answered at the run's end; no other attempt runs here, and the command was asked for once.
      await waitUntil(() => !app.deps.host.isLocal(env.id), 30_000, "the attempt to end");
      expect(runs()).toBe(1);
      expect(lineCount(cwd, "race.txt")).toBe(1);
      expect((await approvalRow(app, approval.id))?.status).toBe("approved");
      expect(await votesOn(app, approval.id)).toHaveLength(2);
    }
  });

  it("a medium-risk call of a quorum agent needs one approver, and cannot be edited into a high-risk one", async () => {
    const { env, approval, cwd } = await startRun(app, mia, "echo medium >> medium.txt", "sod-quorum");
    expect(approval.risk).toBe("medium");
    expect(approval.requiredApprovals).toBeUndefined();
    const before = await decisionState(app);
    const edit = await app.api(`/v1/approvals/${approval.id}`, { key: olga.apiKey, body: { decision: "approve", arguments: { command: HIGH("medium.txt") } } });
    expect((await expectError(edit, 422, "validation_failed")).detail).toMatch(/edited operation is high risk and would need 2 approvals/);
    expect(await decisionState(app)).toEqual(before);
    expect(await ok200(await decide(app, olga.apiKey, approval.id, "approve"))).toMatchObject({ id: env.id, status: "completed" });
    expect(lineCount(cwd, "medium.txt")).toBe(1);
  });
});
