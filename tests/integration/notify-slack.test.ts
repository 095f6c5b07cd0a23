import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { parseNotifyConfig } from "../../server/notify/config";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, getResponse, ok200, rows, waitUntil } from "./helpers";
import { emailOf } from "./notify-helpers";
import { approvalRow, consoleDecide, decisionState, SOD_AGENTS, startRun, votesOn } from "./separation-helpers";
import { slackTextOf, startFakeSlack, type TSlackPost } from "./slack-helpers";

const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const BOT_TOKEN = "xoxb-test-bot-token-000";
const OWN_RUN = 'You started this run; the agent "scripted" requires another person to approve it.';
/** The Slack channel id the "desk" channel posts to with the bot token (chat.postMessage, then chat.update). */
const DESK = "C0DESK0001";
const DESK_AGENT = { ...(SOD_AGENTS[0] as (typeof SOD_AGENTS)[number]), name: "slack-desk", selfApproval: undefined };
const NOT_ALL_SHOWN = "Not all of this approval's arguments are shown in full in a Slack message (too long, or secret-looking values hidden), so it cannot be approved from Slack; nothing was decided. Open it in Countersign to see everything and decide there.";

let app: TTestApp;
let slack: Awaited<ReturnType<typeof startFakeSlack>>;
let nora: TTestUser; // member: starts runs
let olga: TTestUser; // operator
let mia: TTestUser; // member: clicks on its own run
let otto: TTestUser; // operator

beforeAll(async () => {
  slack = await startFakeSlack({
    signingSecret: SIGNING_SECRET,
    botToken: BOT_TOKEN,
    // Slack's emails may differ in case from Countersign's.
    people: { U_OLGA: emailOf("Olga Slackop").toUpperCase(), U_OTTO: emailOf("Otto Slackop"), U_MIA: emailOf("Mia Slackmember"), U_STRANGER: "stranger@example.test" },
  });
  const notify = parseNotifyConfig(
    {
      channels: {
        // A webhook-only channel (with buttons) and one posted to with the bot token.
        chat: { type: "slack", url: `${slack.url}/incoming`, signingSecretEnv: "TEST_SLACK_SIGNING", botTokenEnv: "TEST_SLACK_BOT", apiUrl: `${slack.url}/api` },
        desk: { type: "slack", channel: DESK, signingSecretEnv: "TEST_SLACK_SIGNING", botTokenEnv: "TEST_SLACK_BOT", apiUrl: `${slack.url}/api` },
      },
      rules: [
        { agents: ["scripted", "scripted-reviewed", "sod-quorum"], kinds: ["approval"], channels: ["chat"] },
        { agents: ["slack-desk"], kinds: ["approval"], channels: ["desk"] },
      ],
      retry: { baseMs: 150, maxAttempts: 3, jitter: false },
      pollMs: 50,
      // Generous: a test holds one chat.postMessage answer while it decides.
      timeoutMs: 30_000,
    },
    { TEST_SLACK_SIGNING: SIGNING_SECRET, TEST_SLACK_BOT: BOT_TOKEN },
  );
  app = await startTestApp({ notify, agents: [...SOD_AGENTS, DESK_AGENT] });
  [nora, olga, mia, otto] = await Promise.all([app.user("member", "Nora Slackowner"), app.user("operator", "Olga Slackop"), app.user("member", "Mia Slackmember"), app.user("operator", "Otto Slackop")]);
});
afterEach(() => app?.clock.reset());
afterAll(async () => {
  await app?.close();
  await slack?.close();
});

type TButton = NonNullable<NonNullable<TSlackPost["blocks"]>[number]["elements"]>[number];

/** The Slack message announcing an approval, and its buttons by action id. */
async function buttonsFor(approvalId: string): Promise<{ message: TSlackPost; buttons: Record<string, TButton> }> {
  const message = await waitUntil(() => slack.messages.find((m) => m.text.includes(approvalId)), 30_000, "slack message");
  const actions = message.blocks?.find((b) => b.type === "actions");
  return { message, buttons: Object.fromEntries((actions?.elements ?? []).map((e) => [e.action_id, e])) };
}

/** What Countersign posted to a click's response_url (after acknowledging the click). */
const posted = async (responseUrl: string) => (await waitUntil(() => slack.responsesTo(responseUrl)[0], 5000, "response_url post")).body;
const statusOf = async (approvalId: string) => (await approvalRow(app, approvalId))?.status;
/** "Name (email)", as Slack names a person. */
const label = (name: string) => `${name} (${emailOf(name)})`;
/** The chat.update of the message posted about an approval. */
async function updateOf(approvalId: string) {
  const { message } = await buttonsFor(approvalId);
  return waitUntil(() => slack.updates.find((u) => u.channel === message.channel && u.ts === message.ts), 30_000, `chat.update for ${approvalId}`);
}
/** Presses Reply and submits the form Slack opened with `text`. */
async function replyInSlack(slackUser: string, value: string, text: string | null) {
  const click = await slack.click(app, { slackUser, actionId: "countersign_reply", value });
  expect(click.body).toEqual({ text: "The reply form is open.", replacedMessage: false });
  const opened = await waitUntil(() => slack.views.find((v) => v.triggerId === click.triggerId), 5000, "views.open");
  return { click, view: opened.view, submitted: await slack.submitView(app, { slackUser, view: opened.view, text }) };
}

describe(`Deciding inside Slack (${testDbKind()})`, () => {
  it("the message carries Approve / Deny / Reply and a link to the console; a signed click approves as the mapped user, the run completes, the message shows the outcome; a second click says who decided", async () => {
    const { env, approval } = await startRun(app, nora, "echo from-slack");
    const { message, buttons } = await buttonsFor(approval.id);
    expect(message.text).toContain(`${app.url}/approvals?focus=${approval.id}`);
    // A webhook-only channel posts through its URL.
    expect(message.ts).toBeUndefined();
    expect(Object.keys(buttons).sort()).toEqual(["countersign_approve", "countersign_deny", "countersign_open", "countersign_reply"]);
    expect(buttons.countersign_approve?.text.text).toBe("Approve");
    expect(buttons.countersign_open?.url).toBe(`${app.url}/approvals?focus=${approval.id}`);
    const value = JSON.parse(buttons.countersign_approve?.value ?? "{}") as { approvalId: string; bindingHash: string };
    expect(value).toEqual({ approvalId: approval.id, bindingHash: (await approvalRow(app, approval.id))?.bindingHash });
    // Reply is a form (a modal), not a field in the message.
    expect(message.blocks?.some((b) => b.type === "input")).toBe(false);

    // The link button changes nothing and is not answered in the channel.
    const open = await slack.click(app, { slackUser: "U_OLGA", actionId: "countersign_open", value: "" });
    expect(open.body).toEqual({ text: "", replacedMessage: false });

    const click = await slack.click(app, { slackUser: "U_OLGA", actionId: "countersign_approve", value: buttons.countersign_approve?.value ?? "" });
    expect(click.status, JSON.stringify(click.body)).toBe(200);
    expect(click.body.text).toMatch(new RegExp(`^Approved by ${label("Olga Slackop").replace(/[.()]/g, "\\$&")} via Slack`));
    expect(await posted(click.responseUrl)).toEqual({ replace_original: true, text: click.body.text });
    expect(slack.lookups).toContain("U_OLGA");
    const done = await waitUntil(async () => {
      const e = await ok200(await getResponse(app, nora.apiKey, env.id, env.sessionId));
      return e.status === "completed" ? e : null;
    }, 30_000, "run completed");
    expect(done.output.find((i) => i.type === "tool_result")).toBeTruthy();
    expect((await rows<{ decided_by: string; decided_via: string }>(app, `select decided_by, decided_via from approvals where id = '${approval.id}'`))[0]).toEqual({ decided_by: olga.userId, decided_via: "slack" });

    // Another operator clicks Deny on the same message: nothing changes, and the message says who decided.
    const before = await decisionState(app);
    const late = await slack.click(app, { slackUser: "U_OTTO", actionId: "countersign_deny", value: buttons.countersign_deny?.value ?? "" });
    expect(late.status).toBe(200);
    expect(late.body.text).toMatch(/^Already approved by Olga Slackop \(olga\.slackop@countersign\.local\) via Slack at \d{4}-.*Your click changed nothing\.$/);
    expect(slack.responsesTo(open.responseUrl)).toEqual([]);
    expect(await posted(late.responseUrl)).toEqual({ replace_original: true, text: late.body.text });
    expect(await decisionState(app)).toEqual(before);
    expect(await statusOf(approval.id)).toBe("approved");
  });

  it("a wrong signature, a tampered body, a stale timestamp and an unknown Slack user change nothing and say why", async () => {
    const { approval } = await startRun(app, nora, "echo guarded");
    const { buttons } = await buttonsFor(approval.id);
    const value = buttons.countersign_approve?.value ?? "";
    const before = await decisionState(app);

    const wrong = await slack.click(app, { slackUser: "U_OLGA", actionId: "countersign_approve", value, secret: "not-the-signing-secret" });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ code: "unauthenticated", detail: "The Slack request signature does not match the signing secret; nothing was decided." });
    const tampered = await slack.click(app, { slackUser: "U_OLGA", actionId: "countersign_approve", value, tamper: (raw) => raw.replace("U_OLGA", "U_OTTO") });
    expect(tampered.status).toBe(401);
    const stale = await slack.click(app, { slackUser: "U_OLGA", actionId: "countersign_approve", value, timestamp: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect(stale.status).toBe(401);
    expect(stale.body.detail).toMatch(/timestamp is more than 5 minutes away/);

    const stranger = await slack.click(app, { slackUser: "U_STRANGER", actionId: "countersign_approve", value });
    expect(stranger.status).toBe(200);
    expect(stranger.body.text).toMatch(/^Your Slack email \(stranger@example\.test\) is not an active Countersign user; nothing was decided\./);
    expect(await posted(stranger.responseUrl)).toEqual({ response_type: "ephemeral", replace_original: false, text: stranger.body.text });
    const ghost = await slack.click(app, { slackUser: "U_GHOST", actionId: "countersign_approve", value });
    expect(ghost.body.text).toMatch(/Slack did not tell us your email address/);

    expect(await decisionState(app)).toEqual(before);
    expect(await statusOf(approval.id)).toBe("pending");
    // Refused requests never reach Slack's response_url.
    expect([wrong, tampered, stale].flatMap((c) => slack.responsesTo(c.responseUrl))).toEqual([]);
  });

  it("separation of duties: a member clicking Approve on its own run is refused exactly like the console; an operator then decides", async () => {
    const { env, approval } = await startRun(app, mia, "echo mine");
    const { buttons } = await buttonsFor(approval.id);
    const before = await decisionState(app);
    const own = await slack.click(app, { slackUser: "U_MIA", actionId: "countersign_approve", value: buttons.countersign_approve?.value ?? "" });
    expect(own.status).toBe(200);
    expect(own.body.text).toBe(`${OWN_RUN} Nothing was decided.`);
    expect((await posted(own.responseUrl)).response_type).toBe("ephemeral");
    const console = await consoleDecide(app, { key: mia.apiKey }, approval.id, "approve");
    expect(console).toMatchObject({ status: 403, message: OWN_RUN });
    expect(await decisionState(app)).toEqual(before);

    // Reply opens a form through views.open (the click's trigger_id, the bot token); its submission comes back signed.
    const value = buttons.countersign_reply?.value ?? "";
    const empty = await replyInSlack("U_OLGA", value, "   ");
    expect(empty.view.blocks.find((b) => b.type === "input")).toMatchObject({ block_id: "countersign_reply", element: { type: "plain_text_input", multiline: true } });
    expect(JSON.parse(empty.view.private_metadata)).toEqual({ approvalId: approval.id, bindingHash: (await approvalRow(app, approval.id))?.bindingHash, responseUrl: empty.click.responseUrl });
    expect(empty.submitted.status).toBe(200);
    expect(JSON.parse(empty.submitted.raw)).toEqual({ response_action: "errors", errors: { countersign_reply: "Type your reply (the agent receives it and goes on), or cancel." } });
    const stranger = await slack.submitView(app, { slackUser: "U_STRANGER", view: empty.view, text: "go" });
    expect(JSON.parse(stranger.raw)).toMatchObject({ response_action: "errors", errors: { countersign_reply: expect.stringMatching(/^Your Slack email \(stranger@example\.test\) is not an active Countersign user/) } });
    // The requester replying to its own run is refused like the console would, in the form.
    const own2 = await slack.submitView(app, { slackUser: "U_MIA", view: empty.view, text: "never mind" });
    expect(JSON.parse(own2.raw)).toEqual({ response_action: "errors", errors: { countersign_reply: `${OWN_RUN} Nothing was decided.` } });
    expect(await decisionState(app)).toEqual(before);
    expect(await statusOf(approval.id)).toBe("pending");

    const replied = await slack.submitView(app, { slackUser: "U_OLGA", view: empty.view, text: "use ls -la instead" });
    // An empty 200 closes the form; the outcome replaces the message through the click's response_url.
    expect(replied).toEqual({ status: 200, raw: "" });
    expect((await posted(empty.click.responseUrl)).text).toMatch(/^Denied with a reply by Olga Slackop \(olga\.slackop@countersign\.local\) via Slack: "use ls -la instead"/);
    const done = await waitUntil(async () => {
      const e = await ok200(await getResponse(app, mia.apiKey, env.id, env.sessionId));
      return e.status === "completed" ? e : null;
    }, 30_000, "run completed after the reply");
    expect(done.output.find((i) => i.type === "tool_result")).toMatchObject({ output: { denied: true, reply: "use ls -la instead" } });
  });

  it("a quorum approval counts Slack clicks as votes of different people; the last one settles it and the message says so", async () => {
    const { approval } = await startRun(app, nora, "rm -rf ./build", "sod-quorum");
    const { buttons } = await buttonsFor(approval.id);
    const value = buttons.countersign_approve?.value ?? "";
    const first = await slack.click(app, { slackUser: "U_OLGA", actionId: "countersign_approve", value });
    expect(first.body).toEqual({ text: "Your approval is recorded: 1 of 2 approvals from different people; the run still waits.", replacedMessage: false });
    const again = await slack.click(app, { slackUser: "U_OLGA", actionId: "countersign_approve", value });
    expect(again.body.replacedMessage).toBe(false);
    expect(await statusOf(approval.id)).toBe("pending");
    const second = await slack.click(app, { slackUser: "U_OTTO", actionId: "countersign_approve", value });
    expect(second.body.text).toMatch(/^Approved by Otto Slackop \(otto\.slackop@countersign\.local\) via Slack/);
    expect(await statusOf(approval.id)).toBe("approved");
    expect((await votesOn(app, approval.id)).map((v) => [v.decision, v.via])).toEqual([
      ["approve", "slack"],
      ["approve", "slack"],
    ]);
  });
  it("the message shows what is approved: the action, the arguments in a code block, the risk, the requester and the reviewer's verdict; the requester's text arrives escaped", async () => {
    // The motivating case: the requester's words say one thing, the arguments another.
    const evil = "<!channel> <!here> <@U0ADMIN> <https://evil.example|Open in Countersign> & co";
    const res = await app.api("/v1/approvals", { key: nora.apiKey, body: { agent: "scripted", action: "exec", arguments: { command: "rm -rf /srv/data" }, message: `Run \`ls\`? ${evil}` } });
    const created = (await res.json()) as { id: string; status: string };
    expect(res.status, JSON.stringify(created)).toBe(201);
    expect(created.status).toBe("pending");
    const { message, buttons } = await buttonsFor(created.id);
    const row = await approvalRow(app, created.id);
    const shown = slackTextOf(message);
    expect(shown).toContain("*Action:* `tool:exec` (tool `exec`)");
    expect(shown).toContain("*command*\n```\nrm -rf /srv/data\n```");
    expect(shown).toContain(`*Risk:* ${row?.risk}`);
    expect(shown).toContain(`*Requested by:* ${label("Nora Slackowner")}`);
    // No reviewer looked at this one (the reviewer's verdict of a hosted call: below).
    expect(row?.reviewer).toBeNull();
    expect(shown).toContain("*Reviewer:* No reviewer looked at it; a person decides.");
    // Escaped everywhere (the fallback text too): no mention, channel ping or masked link survives.
    for (const raw of ["<!channel>", "<!here>", "<@U0ADMIN>", "<https://evil.example", "& co"]) expect(shown).not.toContain(raw);
    expect(shown).toContain(">Run `ls`? &lt;!channel&gt; &lt;!here&gt; &lt;@U0ADMIN&gt; &lt;https://evil.example|Open in Countersign&gt; &amp; co");
    const links = [...shown.matchAll(/<([^>]*)>/g)].map((m) => m[1]);
    expect(links.length).toBeGreaterThan(0);
    for (const target of links) expect(target).toMatch(new RegExp(`^${`${app.url}/approvals?focus=${created.id}`.replace(/[.?]/g, "\\$&")}\\|(Review and decide|Open) in Countersign$`));
    // Everything fits: Approve is offered.
    expect(buttons.countersign_approve).toBeTruthy();
  });

  it("an argument longer than a Slack message allows is cut with a link to the console, and the message has no Approve button; a crafted Approve click is refused", async () => {
    // An agent whose exec calls the exec reviewer sees first (none is configured here: its fallback asks a person).
    const { approval } = await startRun(app, nora, `echo ${"x".repeat(4000)}`, "scripted-reviewed");
    const { message, buttons } = await buttonsFor(approval.id);
    expect(Object.keys(buttons).sort()).toEqual(["countersign_deny", "countersign_open", "countersign_reply"]);
    const shown = slackTextOf(message);
    // The exec reviewer's verdict, as stored with the approval.
    const row = await approvalRow(app, approval.id);
    expect(row).toMatchObject({ reviewer: "none", reviewerRationale: "No reviewer is configured." });
    expect(shown).toContain("*Reviewer:* Exec reviewer none asked a person: No reviewer is configured.");
    expect(shown).toContain("Some arguments are not shown here in full (too long, or secret-looking values hidden as [redacted]); the console shows all of them.");
    expect(shown).toContain(`<${app.url}/approvals?focus=${approval.id}|Open in Countersign>`);
    expect(shown).toMatch(/x… \[\d+ more characters\]/);

    const before = await decisionState(app);
    const crafted = await slack.click(app, { slackUser: "U_OLGA", actionId: "countersign_approve", value: buttons.countersign_deny?.value ?? "" });
    expect(crafted.body).toEqual({ text: NOT_ALL_SHOWN, replacedMessage: false });
    expect((await posted(crafted.responseUrl)).response_type).toBe("ephemeral");
    expect(await decisionState(app)).toEqual(before);
    expect(await statusOf(approval.id)).toBe("pending");
    // Deny is still possible from Slack: it runs nothing.
    const denied = await slack.click(app, { slackUser: "U_OLGA", actionId: "countersign_deny", value: buttons.countersign_deny?.value ?? "" });
    expect(denied.body.text).toMatch(/^Denied by Olga Slackop \(olga\.slackop@countersign\.local\) via Slack; it was not run\./);
  });

  it("a secret-looking value shown as [redacted] is not shown whole: no Approve button, and a crafted Approve click is refused", async () => {
    const { approval } = await startRun(app, nora, "git push origin 3f5a9c1e7b2d4f60a8c9e1b3d5f7a9c0e2b4d6f8:main", "scripted-reviewed");
    const { message, buttons } = await buttonsFor(approval.id);
    expect(Object.keys(buttons).sort()).toEqual(["countersign_deny", "countersign_open", "countersign_reply"]);
    expect(slackTextOf(message)).toContain("git push origin [redacted]:main");
    const crafted = await slack.click(app, { slackUser: "U_OLGA", actionId: "countersign_approve", value: buttons.countersign_deny?.value ?? "" });
    expect(crafted.body).toEqual({ text: NOT_ALL_SHOWN, replacedMessage: false });
    expect(await statusOf(approval.id)).toBe("pending");
  });

  it("a channel with a bot token and a channel id: chat.postMessage, then chat.update for every outcome wherever it was decided (console, /v1, Slack reply, cancel, expiry)", async () => {
    const run = async (what: string) => {
      const started = await startRun(app, nora, `echo desk-${what}`, "slack-desk");
      const { message, buttons } = await buttonsFor(started.approval.id);
      expect(message).toMatchObject({ channel: DESK, ts: expect.stringMatching(/^\d+\.\d+$/) });
      return { ...started, message, buttons };
    };
    const stamp = "at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z";
    const expectUpdate = async (approvalId: string, first: RegExp, command: string) => {
      const update = await updateOf(approvalId);
      expect(update.blocks?.some((b) => b.type === "actions")).toBe(false);
      expect(update.text).toMatch(first);
      // Still showing what was decided.
      expect(slackTextOf(update)).toContain(`*command*\n\`\`\`\necho desk-${command}\n\`\`\``);
      return update;
    };

    const inConsole = await run("console");
    expect((await consoleDecide(app, { key: olga.apiKey }, inConsole.approval.id, "approve")).status).toBe(200);
    await expectUpdate(inConsole.approval.id, new RegExp(`^Approved by Olga Slackop \\(olga\\.slackop@countersign\\.local\\) via the console ${stamp}\\.`), "console");

    const overHttp = await run("http");
    expect((await decide(app, otto.apiKey, overHttp.approval.id, "deny")).status).toBe(200);
    await expectUpdate(overHttp.approval.id, new RegExp(`^Denied by Otto Slackop \\(otto\\.slackop@countersign\\.local\\) via the HTTP API ${stamp}; it was not run\\.`), "http");

    const replied = await run("reply");
    const { submitted } = await replyInSlack("U_OLGA", replied.buttons.countersign_reply?.value ?? "", "try <!here> ls -la");
    expect(submitted).toEqual({ status: 200, raw: "" });
    const update = await expectUpdate(replied.approval.id, new RegExp(`^Denied with a reply by Olga Slackop \\(olga\\.slackop@countersign\\.local\\) via Slack ${stamp}; the agent received the reply and goes on\\.`), "reply");
    expect(slackTextOf(update)).toContain(">try &lt;!here&gt; ls -la");

    const cancelled = await run("cancel");
    expect((await app.api(`/v1/responses/${cancelled.env.id}/cancel`, { key: nora.apiKey, body: {} })).status).toBe(200);
    await expectUpdate(cancelled.approval.id, new RegExp(`^Cancelled by Nora Slackowner \\(nora\\.slackowner@countersign\\.local\\) via the HTTP API ${stamp}: the run was cancelled`), "cancel");

    const expiring = await run("expire");
    const expiresAt = (await approvalRow(app, expiring.approval.id))?.expiresAt as Date;
    app.clock.advance(expiresAt.getTime() - Date.now() + 1000);
    await expectUpdate(expiring.approval.id, new RegExp(`^Expired ${stamp}: nobody decided in time; it was not run\\.`), "expire");

    // One update per message, logged as a delivery of the channel; a webhook-only message is never updated.
    const ids = [inConsole, overHttp, replied, cancelled, expiring].map((r) => r.approval.id);
    const updateRows = () => rows<{ subject_id: string; status: string }>(app, `select subject_id, status from notifications where channel = 'desk' and event = 'resolved' and subject_id in (${ids.map((id) => `'${id}'`).join(", ")})`);
    const logged = await waitUntil(async () => ((await updateRows()).every((r) => r.status === "delivered") ? updateRows() : null), 30_000, "update rows delivered");
    expect(logged.map((r) => r.subject_id).sort()).toEqual([...ids].sort());
    expect(slack.updates.every((u) => u.channel === DESK)).toBe(true);
  });
  it("a message whose post is answered only after the approval was decided is updated too (whichever comes last enqueues the update)", async () => {
    const held = slack.holdNextPost();
    const { approval } = await startRun(app, nora, "echo desk-late", "slack-desk");
    await held.posted;
    // Decided while Slack has not answered the post yet: the decision finds no message to update.
    expect((await consoleDecide(app, { key: olga.apiKey }, approval.id, "deny")).status).toBe(200);
    expect(await rows(app, `select 1 from slack_messages where subject_id = '${approval.id}'`)).toEqual([]);
    held.release();
    const update = await updateOf(approval.id);
    expect(update.text).toMatch(/^Denied by Olga Slackop \(olga\.slackop@countersign\.local\) via the console at /);
    const logged = await rows<{ n: number | string }>(app, `select count(*) as n from notifications where subject_id = '${approval.id}' and event = 'resolved'`);
    expect(Number(logged[0]?.n)).toBe(1);
  });
});
