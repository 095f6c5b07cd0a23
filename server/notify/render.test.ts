import { describe, expect, it } from "vitest";
import { approvalView, consoleLink, emailMessage, questionView, scrubText, SHOWN_PART_MAX, type TApprovalSource, type TNotificationPayload, webhookBody } from "./render";
import { signature, signedHeaders, verifySignature } from "./sign";
import { SLACK_SECTION_MAX, slackMessage, slackShowsAll, type TSlackBlock } from "./slack-render";

const SECRET = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e";

describe("scrubbing", () => {
  it.each([
    [`export API_TOKEN=${SECRET} && deploy`, "API_TOKEN=[redacted] && deploy"],
    ["curl -H 'Authorization: Bearer abcdef123456' https://x", "Authorization: [redacted]"],
    ["psql postgres://admin:hunter2@db/prod", "postgres://[redacted]@db/prod"],
    ["mysql --password hunter2 -u root", "--password [redacted]"],
    ['{"password": "hunter2"}', '"password": [redacted]'],
    ["git push https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com", "https://[redacted]@github.com"],
    ["token is 9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c", "[redacted]"],
  ])("%s", (input, expected) => {
    const out = scrubText(input);
    expect(out).toContain(expected);
    for (const secret of [SECRET, "hunter2", "abcdef123456", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c"]) expect(out).not.toContain(secret);
  });

  it("keeps ordinary commands and our own ids readable", () => {
    expect(scrubText("ls -la /tmp/workspaces/session_0123456789abcdef0123456789abcdef")).toBe("ls -la /tmp/workspaces/session_0123456789abcdef0123456789abcdef");
    expect(scrubText("rm -rf build && npm test")).toBe("rm -rf build && npm test");
    // Long hyphenated names people write stay; random-looking tokens of the same length go.
    expect(scrubText("rm -rf ./build-e2e-mx3ie8vd-h5tbom-marker")).toBe("rm -rf ./build-e2e-mx3ie8vd-h5tbom-marker");
    expect(scrubText("cp release-notes-for-version-two-final.md out/")).toBe("cp release-notes-for-version-two-final.md out/");
    for (const token of ["kXKRWrh-X9Hft0Nrhys_VubMqbjHMceNnYccRAHD6GM", "q8w7e6r5t4y3u2i1o0p9a8s7d6f5g4h3", "9F8E7D6C5B4A39281706F5E4D3C2B1A0"]) {
      expect(scrubText(`curl -d ${token} https://x`)).toBe("curl -d [redacted] https://x");
    }
  });
});

const approval = approvalView({
  id: "approval_1",
  agent: "scripted",
  toolName: "exec",
  action: "tool:exec",
  message: `Run \`export API_TOKEN=${SECRET}\` in /w?`,
  arguments: { command: `export API_TOKEN=${SECRET}`, env: { password: "hunter2" }, card: "4111111111111111" },
  risk: "high",
  expiresAt: new Date("2030-01-01T00:05:00Z"),
});

describe("payloads", () => {
  it("never carry secrets: arguments redacted by key, text scrubbed, card numbers masked", () => {
    const payload = { event: "requested" as const, subject: approval, links: { console: consoleLink("http://cs.test/", "approval", "approval_1") } };
    const all = JSON.stringify([webhookBody("notif_1", payload), slackMessage(payload), emailMessage(payload, { url: "http://cs.test/l/tok", singleUse: true })]);
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain("hunter2");
    expect(all).not.toContain("4111111111111111");
    expect(all).toContain("************1111");
    expect(payload.links.console).toBe("http://cs.test/approvals?focus=approval_1");
  });

  it("Slack messages link to decide and show the operation, without buttons on a channel that has none; webhook bodies name the event", () => {
    const payload = { event: "escalation" as const, subject: approval, links: { console: "http://cs.test/approvals?focus=approval_1" } };
    const slack = slackMessage(payload);
    expect(slack.text).toMatch(/^Escalated: Approval needed, high risk \(agent scripted\)/);
    expect(slack.text).toContain("<http://cs.test/approvals?focus=approval_1|Review and decide in Countersign>");
    expect(slack.blocks?.some((b) => b.type === "actions")).toBe(false);
    expect(texts(slack.blocks)).toContain("*command*\n```\nexport API_TOKEN=[redacted]\n```");
    expect(webhookBody("notif_1", payload)).toMatchObject({ id: "notif_1", type: "approval.escalation", subject: { id: "approval_1", risk: "high" } });
  });

  it("questions show only header, question and option texts", () => {
    const view = questionView({ id: "ask_1", agent: null, questions: [{ header: "Key", question: "Paste the deploy key", options: [{ label: "Skip" }, { label: "Later" }], isSecret: true } as never], expiresAt: new Date(0) });
    expect(view).toEqual({ kind: "question", id: "ask_1", agent: null, questions: [{ header: "Key", question: "Paste the deploy key", options: ["Skip", "Later"] }], expiresAt: "1970-01-01T00:00:00.000Z" });
    const mail = emailMessage({ event: "reminder", subject: view, links: { console: "http://cs.test/answer/ask_1" } }, { url: "http://cs.test/answer/ask_1", singleUse: false });
    expect(mail.subject).toBe("Reminder: Question waiting: Paste the deploy key");
    expect(mail.text).toContain("Answer: http://cs.test/answer/ask_1\nSign-in required.");
  });
});

/** Every mrkdwn and plain text of some blocks, joined (what Slack would parse). */
const texts = (blocks: TSlackBlock[] | undefined): string => JSON.stringify(blocks ?? []).replace(/\\n/g, "\n").replace(/\\"/g, '"');
const CONSOLE = "http://cs.test/approvals?focus=approval_2";
const source = (over: Partial<TApprovalSource>): TApprovalSource => ({
  id: "approval_2",
  agent: "scripted",
  toolName: "exec",
  action: "tool:exec",
  message: "Run `ls`?",
  arguments: { command: "ls" },
  risk: "medium",
  expiresAt: new Date("2030-01-01T00:05:00Z"),
  reviewer: "rules",
  reviewerRationale: "The rules recognise this command as neither clearly read-only nor clearly dangerous.",
  requester: { name: "Nora", email: "nora@example.test" },
  ...over,
});
const payloadOf = (a: TApprovalSource): TNotificationPayload => ({ event: "requested", subject: approvalView(a), links: { console: CONSOLE }, bindingHash: "hash_1" });
const buttonsOf = (blocks: TSlackBlock[] | undefined) => ((blocks?.find((b) => b.type === "actions")?.elements ?? []) as Array<{ action_id: string; url?: string }>).map((e) => e.action_id);

describe("Slack messages show what they approve", () => {
  it("the action, every argument in a code block, the risk, the requester and the reviewer's verdict; Approve / Deny / Reply / Open", () => {
    const slack = slackMessage(payloadOf(source({ arguments: { command: "rm -rf /srv/data", timeoutMs: 5000 } })), { buttons: true });
    const all = texts(slack.blocks);
    expect(all).toContain("*Action:* `tool:exec` (tool `exec`)");
    expect(all).toContain("*Risk:* medium");
    expect(all).toContain("*Requested by:* Nora (nora@example.test)");
    expect(all).toContain(">Run `ls`?");
    expect(all).toContain("*Reviewer:* Exec reviewer rules asked a person: The rules recognise this command");
    expect(all).toContain("*command*\n```\nrm -rf /srv/data\n```");
    expect(all).toContain("*timeoutMs*\n```\n5000\n```");
    expect(buttonsOf(slack.blocks)).toEqual(["countersign_approve", "countersign_deny", "countersign_reply", "countersign_open"]);
    expect(slack.blocks?.find((b) => b.type === "actions")?.elements).toContainEqual(expect.objectContaining({ action_id: "countersign_open", url: CONSOLE }));
  });

  it("a coding tool's input renders as in the console: a command, a diff in a ``` block", () => {
    const bash = texts(slackMessage(payloadOf(source({ action: "coding:Bash", toolName: "Bash", arguments: { command: "npm test", description: "Run the tests", dangerouslyDisableSandbox: true } }))).blocks);
    expect(bash).toContain("*command*\n```\nnpm test\n```");
    expect(bash).toContain("*dangerouslyDisableSandbox*\n```\ntrue\n```");
    const edit = texts(slackMessage(payloadOf(source({ action: "coding:Edit", toolName: "Edit", arguments: { file_path: "src/a.ts", old_string: "const a = 1;", new_string: "const a = 2;" } }))).blocks);
    expect(edit).toContain("*file_path*\n```\nsrc/a.ts\n```");
    expect(edit).toContain("*edit*\n```\n--- src/a.ts\n+++ src/a.ts\n@@ -1,1 +1,1 @@\n-const a = 1;\n+const a = 2;\n```");
  });

  it("text from a requester, an agent or a tool is escaped: no <!channel>, <!here>, <@U…> or masked link survives, code blocks included", () => {
    const evil = "<!channel> <!here> <@U0ADMIN> <https://evil.example|Open in Countersign> & more";
    const slack = slackMessage(
      payloadOf(source({ message: `Run \`ls\`? ${evil}`, agent: "<!here>", arguments: { command: `echo ${evil}`, note: "```\n*Risk:* low\n```" }, requester: { name: "<!channel> Nora", email: "nora@example.test" }, reviewerRationale: evil })),
      { buttons: true },
    );
    const all = `${slack.text}\n${texts(slack.blocks)}`;
    for (const raw of ["<!channel>", "<!here>", "<@U0ADMIN>", "<https://evil.example", "& more"]) expect(all).not.toContain(raw);
    expect(all).toContain("&lt;!channel&gt; &lt;!here&gt; &lt;@U0ADMIN&gt; &lt;https://evil.example|Open in Countersign&gt; &amp; more");
    // Every link left is ours: our URL, our label.
    expect([...all.matchAll(/<([^>]*)>/g)].map((m) => m[1])).toEqual(expect.arrayContaining([`${CONSOLE}|Review and decide in Countersign`]));
    for (const m of all.matchAll(/<([^>]*)>/g)) expect(m[1]).toMatch(new RegExp(`^${CONSOLE.replace(/[?]/g, "\\?")}\\|(Review and decide|Open) in Countersign$`));
    // A fence in an argument cannot close ours.
    expect(all).toContain("*note*\n```\n`\u200b``\n*Risk:* low\n`\u200b``\n```");
  });

  it("an argument longer than the message allows is cut and said to be: no Approve button, the link to the console", () => {
    const long = "x".repeat(SHOWN_PART_MAX + 10);
    const payload = payloadOf(source({ arguments: { command: `echo ${long}` } }));
    expect(payload.subject.kind === "approval" && payload.subject.operation?.complete).toBe(false);
    const slack = slackMessage(payload, { buttons: true });
    expect(buttonsOf(slack.blocks)).toEqual(["countersign_deny", "countersign_reply", "countersign_open"]);
    expect(texts(slack.blocks)).toContain("Some arguments are not shown here in full (too long, or secret-looking values hidden as [redacted]); the console shows all of them.");
    expect(texts(slack.blocks)).toContain(`<${CONSOLE}|Open in Countersign>`);
    expect(texts(slack.blocks)).toMatch(/x… \[\d+ more characters\]\n```\n_Cut here: too long for one Slack section._/);
    for (const b of slack.blocks ?? []) if (b.type === "section" && b.text) expect((b.text as { text: string }).text.length).toBeLessThanOrEqual(SLACK_SECTION_MAX);
  });

  it("a value hidden as [redacted] is not shown whole either: no Approve button; an operation with nothing hidden keeps it", () => {
    const sha = "3f5a9c1e7b2d4f60a8c9e1b3d5f7a9c0e2b4d6f8";
    for (const args of [{ command: `git push origin ${sha}:main` }, { command: "deploy", api_key: "abc" }, { command: "pay 4111111111111111" }]) {
      const payload = payloadOf(source({ arguments: args }));
      expect(payload.subject.kind === "approval" && payload.subject.operation?.complete, JSON.stringify(args)).toBe(false);
      const slack = slackMessage(payload, { buttons: true });
      expect(buttonsOf(slack.blocks)).toEqual(["countersign_deny", "countersign_reply", "countersign_open"]);
      expect(texts(slack.blocks)).toContain("secret-looking values hidden as [redacted]");
    }
    const plain = payloadOf(source({ arguments: { command: "git push origin main" } }));
    expect(plain.subject.kind === "approval" && plain.subject.operation?.complete).toBe(true);
    expect(buttonsOf(slackMessage(plain, { buttons: true }).blocks)).toContain("countersign_approve");
  });

  it("Slack's own limits cut too: a section that escaping makes too long, more arguments than blocks", () => {
    // 2,900 characters fit the payload, but escaped (`<` → `&lt;`) not one Slack section.
    const angled = payloadOf(source({ arguments: { command: "<".repeat(2900) } }));
    expect(angled.subject.kind === "approval" && angled.subject.operation?.complete).toBe(true);
    expect(slackShowsAll(angled.subject as never)).toBe(false);
    expect(buttonsOf(slackMessage(angled, { buttons: true }).blocks)).not.toContain("countersign_approve");
    const many = payloadOf(source({ arguments: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, i])) }));
    const slack = slackMessage(many, { buttons: true });
    expect(slack.blocks?.length).toBeLessThanOrEqual(50);
    expect(buttonsOf(slack.blocks)).not.toContain("countersign_approve");
    // Just within every limit: Approve stays.
    expect(buttonsOf(slackMessage(payloadOf(source({ arguments: { command: "a".repeat(2900) } })), { buttons: true }).blocks)).toContain("countersign_approve");
  });

  it("an outcome replaces the buttons: who (name and email), via what, when; a reply quoted and escaped", () => {
    const payload = payloadOf(source({}));
    const done = slackMessage(payload, { outcome: { status: "denied", by: "Olga (olga@example.test)", via: "console", at: "2030-01-01T00:01:00.000Z", reply: "use <!channel> ls -la" } });
    expect(done.blocks?.some((b) => b.type === "actions")).toBe(false);
    expect(texts(done.blocks?.slice(0, 1))).toContain("*Denied with a reply by Olga (olga@example.test) via the console at 2030-01-01T00:01:00.000Z; the agent received the reply and goes on.*\n>use &lt;!channel&gt; ls -la");
    expect(done.text).toMatch(/^Denied with a reply by Olga/);
    const expired = slackMessage(payload, { outcome: { status: "expired", by: null, via: "system", at: "2030-01-01T00:05:00.000Z", reply: null } });
    expect(expired.text).toMatch(/^Expired at 2030-01-01T00:05:00\.000Z: nobody decided in time/);
  });

  it("email carries the action, the arguments (text and HTML), the risk, the requester and the reviewer's verdict; a cut says so with the console link", () => {
    const mail = emailMessage(payloadOf(source({ arguments: { command: "rm -rf /srv/data <b>" } })), { url: "http://cs.test/l/tok", singleUse: true });
    expect(mail.text).toContain("Action: tool:exec (tool exec)\nRisk: medium\nAgent: scripted\nRequested by: Nora (nora@example.test)\nMessage: Run `ls`?\nReviewer: Exec reviewer rules asked a person: The rules recognise");
    expect(mail.text).toContain("Arguments:\ncommand: rm -rf /srv/data <b>");
    expect(mail.html).toContain("<pre>rm -rf /srv/data &#60;b&#62;</pre>");
    expect(mail.text).not.toContain("too long");
    const cut = emailMessage(payloadOf(source({ arguments: { command: "y".repeat(SHOWN_PART_MAX + 1) } })), { url: "http://cs.test/l/tok", singleUse: true });
    expect(cut.text).toContain(`Some arguments are not shown here in full (too long, or secret-looking values hidden as [redacted]); the console shows all of them. ${CONSOLE}`);
    expect(cut.html).toContain(`<a href="${CONSOLE.replace("?", "?")}">Open in Countersign</a>`);
  });
});

describe("signatures", () => {
  it("HMAC-SHA256 over timestamp.body, verified in constant time, stale timestamps refused", () => {
    const now = new Date("2030-01-01T00:00:00Z");
    const headers = signedHeaders("0123456789abcdef", '{"a":1}', { deliveryId: "notif_1", event: "approval.requested", now });
    expect(headers["X-Countersign-Timestamp"]).toBe("1893456000");
    expect(headers["X-Countersign-Signature"]).toBe(signature("0123456789abcdef", "1893456000", '{"a":1}'));
    expect(headers["X-Countersign-Signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    const given = { signature: headers["X-Countersign-Signature"], timestamp: headers["X-Countersign-Timestamp"] };
    expect(verifySignature("0123456789abcdef", given, '{"a":1}', { now })).toBe(true);
    expect(verifySignature("0123456789abcdef", given, '{"a":2}', { now })).toBe(false);
    expect(verifySignature("another-secret-xx", given, '{"a":1}', { now })).toBe(false);
    expect(verifySignature("0123456789abcdef", given, '{"a":1}', { now: new Date(now.getTime() + 301_000) })).toBe(false);
  });
});
