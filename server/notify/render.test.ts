import { describe, expect, it } from "vitest";
import { approvalView, consoleLink, emailMessage, questionView, scrubText, slackMessage, webhookBody } from "./render";
import { signature, signedHeaders, verifySignature } from "./sign";

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

  it("Slack messages are text with a link to decide; webhook bodies name the event", () => {
    const payload = { event: "escalation" as const, subject: approval, links: { console: "http://cs.test/approvals?focus=approval_1" } };
    const slack = slackMessage(payload);
    expect(Object.keys(slack)).toEqual(["text"]);
    expect(slack.text).toMatch(/^Escalated: Approval needed, high risk \(agent scripted\)/);
    expect(slack.text).toContain("<http://cs.test/approvals?focus=approval_1|Review and decide in Countersign>");
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
