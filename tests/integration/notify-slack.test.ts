import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { parseNotifyConfig } from "../../server/notify/config";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { getResponse, ok200, rows, waitUntil } from "./helpers";
import { emailOf } from "./notify-helpers";
import { approvalRow, consoleDecide, decisionState, SOD_AGENTS, startRun, votesOn } from "./separation-helpers";
import { slackTextOf, startFakeSlack, type TSlackPost } from "./slack-helpers";

const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const BOT_TOKEN = "xoxb-test-bot-token-000";
const OWN_RUN = 'You started this run; the agent "scripted" requires another person to approve it.';
const NOT_ALL_SHOWN = "Not all of this approval's arguments fit in a Slack message, so it cannot be approved from Slack; nothing was decided. Open it in Countersign to see everything and decide there.";

let app: TTestApp;
let slack: Awaited<ReturnType<typeof startFakeSlack>>;
let nora: TTestUser; // member: starts runs
let olga: TTestUser; // operator
let mia: TTestUser; // member: clicks on its own run

beforeAll(async () => {
  slack = await startFakeSlack({
    signingSecret: SIGNING_SECRET,
    botToken: BOT_TOKEN,
    // Slack's emails may differ in case from Countersign's.
    people: { U_OLGA: emailOf("Olga Slackop").toUpperCase(), U_OTTO: emailOf("Otto Slackop"), U_MIA: emailOf("Mia Slackmember"), U_STRANGER: "stranger@example.test" },
  });
  const notify = parseNotifyConfig(
    {
      channels: { chat: { type: "slack", url: `${slack.url}/incoming`, signingSecretEnv: "TEST_SLACK_SIGNING", botTokenEnv: "TEST_SLACK_BOT", apiUrl: `${slack.url}/api` } },
      rules: [{ agents: ["scripted", "scripted-reviewed", "sod-quorum"], kinds: ["approval"], channels: ["chat"] }],
      retry: { baseMs: 150, maxAttempts: 3, jitter: false },
      pollMs: 50,
      timeoutMs: 2000,
    },
    { TEST_SLACK_SIGNING: SIGNING_SECRET, TEST_SLACK_BOT: BOT_TOKEN },
  );
  app = await startTestApp({ notify, agents: SOD_AGENTS });
  [nora, olga, mia] = await Promise.all([app.user("member", "Nora Slackowner"), app.user("operator", "Olga Slackop"), app.user("member", "Mia Slackmember"), app.user("operator", "Otto Slackop")]);
});
afterAll(async () => {
  await app?.close();
  await slack?.close();
});

type TButton = NonNullable<NonNullable<TSlackPost["blocks"]>[number]["elements"]>[number];

/** The Slack message announcing an approval, and its buttons by action id. */
async function buttonsFor(approvalId: string): Promise<{ message: TSlackPost; buttons: Record<string, TButton> }> {
  const message = await waitUntil(() => slack.messages.find((m) => m.text.includes(approvalId)), 10_000, "slack message");
  const actions = message.blocks?.find((b) => b.type === "actions");
  return { message, buttons: Object.fromEntries((actions?.elements ?? []).map((e) => [e.action_id, e])) };
}

/** What Countersign posted to a click's response_url (after acknowledging the click). */
const posted = async (responseUrl: string) => (await waitUntil(() => slack.responsesTo(responseUrl)[0], 5000, "response_url post")).body;
const statusOf = async (approvalId: string) => (await approvalRow(app, approvalId))?.status;
/** "Name (email)", as Slack names a person. */
const label = (name: string) => `${name} (${emailOf(name)})`;
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
    }, 10_000, "run completed");
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
    }, 10_000, "run completed after the reply");
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
    expect(shown).toContain("Some arguments are too long to show here and are cut; the console shows all of them.");
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

});
