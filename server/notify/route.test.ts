import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseNotifyConfig } from "./config";
import { backoffMs, deliveriesOf, dueEvents, matchingRules, type TRoutedSubject, teamsNamed } from "./route";
import { verifySlackRequest } from "./slack-verify";

const config = parseNotifyConfig(
  {
    smtp: { host: "127.0.0.1", port: 2525, from: "countersign@example.test" },
    channels: { hook: { type: "webhook", url: "http://127.0.0.1:9/hook", secret: "0123456789abcdef-secret" }, chat: { type: "slack", url: "http://127.0.0.1:9/slack" }, mail: { type: "email" } },
    groups: { oncall: ["Ops@Example.test", "dev@example.test"], security: ["sec@example.test"], leads: ["lead@example.test"] },
    rules: [
      { agents: ["scripted"], kinds: ["approval"], notify: ["oncall"], channels: ["hook", "mail"], remindBeforeMs: 60_000 },
      { risks: ["high"], notify: ["security"], channels: ["mail", "chat"], escalateAfterMs: 30_000, escalateTo: ["leads"] },
      { kinds: ["question"], notify: ["oncall"], channels: ["mail"] },
    ],
  },
  {},
);

const t0 = new Date("2030-01-01T00:00:00Z");
const NO_TEAMS = new Map<string, string[]>();
const approval = (risk: "low" | "medium" | "high", agent = "scripted"): TRoutedSubject => ({ kind: "approval", agent, risk, createdAt: t0, expiresAt: new Date(t0.getTime() + 300_000) });
const at = (ms: number) => new Date(t0.getTime() + ms);

describe("routing", () => {
  it("matches rules by agent, risk and kind; questions match only rules without risks", () => {
    expect(matchingRules(config, approval("medium"))).toHaveLength(1);
    expect(matchingRules(config, approval("high"))).toHaveLength(2);
    expect(matchingRules(config, approval("high", "other"))).toHaveLength(1);
    expect(matchingRules(config, approval("medium", "other"))).toHaveLength(0);
    const question: TRoutedSubject = { kind: "question", agent: null, risk: null, createdAt: t0, expiresAt: at(300_000) };
    expect(matchingRules(config, question)).toEqual([config.rules[2]]);
  });

  it("sends one message per channel-wide channel and one email per person, deduplicated and lower-cased", () => {
    const d = deliveriesOf(config, matchingRules(config, approval("high")), (r) => r.notify, NO_TEAMS);
    expect(d).toEqual([
      { channel: "hook", channelType: "webhook", recipient: "hook" },
      { channel: "mail", channelType: "email", recipient: "ops@example.test" },
      { channel: "mail", channelType: "email", recipient: "dev@example.test" },
      { channel: "mail", channelType: "email", recipient: "sec@example.test" },
      { channel: "chat", channelType: "slack", recipient: "chat" },
    ]);
    // A medium-risk approval never reaches the high-risk group.
    expect(deliveriesOf(config, matchingRules(config, approval("medium")), (r) => r.notify, NO_TEAMS).map((x) => x.recipient)).not.toContain("sec@example.test");
  });

  it("a rule may name a team: its members as they are now get the email; an unknown team reaches nobody", () => {
    const teamConfig = parseNotifyConfig(
      { smtp: { host: "127.0.0.1", port: 2525, from: "countersign@example.test" }, channels: { mail: { type: "email" } }, rules: [{ notify: ["team:payments-oncall", "team:nobody-here"], channels: ["mail"] }] },
      {},
    );
    expect(teamsNamed(teamConfig)).toEqual(["payments-oncall", "nobody-here"]);
    const teams = new Map([["payments-oncall", ["Ada@acme.test", "bo@acme.test"]]]);
    expect(deliveriesOf(teamConfig, teamConfig.rules, (r) => r.notify, teams).map((d) => d.recipient)).toEqual(["ada@acme.test", "bo@acme.test"]);
    expect(() => parseNotifyConfig({ channels: { hook: { type: "webhook", url: "http://127.0.0.1:9/h", secret: "0123456789abcdef-secret" } }, rules: [{ notify: ["team: spaced"], channels: ["hook"] }] }, {})).toThrow(/team:<name>/);
  });

  it("plans the request at once, the reminder before expiry and the escalation after its delay, each once", () => {
    const s = approval("high");
    expect(dueEvents(config, s, t0, new Set(), NO_TEAMS).map((e) => e.event)).toEqual(["requested"]);
    expect(dueEvents(config, s, at(30_000), new Set(["requested"]), NO_TEAMS).map((e) => e.event)).toEqual(["escalation"]);
    const escalation = dueEvents(config, s, at(30_000), new Set(["requested"]), NO_TEAMS)[0];
    expect(escalation?.deliveries.map((d) => d.recipient)).toEqual(["lead@example.test", "chat"]);
    expect(dueEvents(config, s, at(239_999), new Set(["requested", "escalation"]), NO_TEAMS)).toEqual([]);
    const reminder = dueEvents(config, s, at(240_000), new Set(["requested", "escalation"]), NO_TEAMS);
    expect(reminder.map((e) => e.event)).toEqual(["reminder"]);
    expect(reminder[0]?.deliveries.map((d) => d.recipient)).toEqual(["hook", "ops@example.test", "dev@example.test"]);
    expect(dueEvents(config, s, at(250_000), new Set(["requested", "escalation", "reminder"]), NO_TEAMS)).toEqual([]);
  });

  it("a reminder whose moment is before creation is planned with no deliveries", () => {
    const s = { ...approval("medium"), expiresAt: at(10_000) };
    const due = dueEvents(config, s, t0, new Set(["requested"]), NO_TEAMS);
    expect(due).toEqual([{ event: "reminder", deliveries: [] }]);
  });

  it("a rule may name people by email address beside groups, for requests and escalations", () => {
    const people = parseNotifyConfig(
      {
        smtp: { host: "127.0.0.1", port: 2525, from: "countersign@example.test" },
        channels: { mail: { type: "email" } },
        groups: { oncall: ["ops@example.test"] },
        rules: [{ notify: ["oncall", "Ada@Example.test"], channels: ["mail"], escalateAfterMs: 1000, escalateTo: ["boss@example.test"] }],
      },
      {},
    );
    const rules = matchingRules(people, approval("low"));
    expect(deliveriesOf(people, rules, (r) => r.notify, NO_TEAMS).map((d) => d.recipient).sort()).toEqual(["ada@example.test", "ops@example.test"]);
    expect(deliveriesOf(people, rules, (r) => r.escalateTo ?? [], NO_TEAMS).map((d) => d.recipient)).toEqual(["boss@example.test"]);
    expect(() => parseNotifyConfig({ channels: { m: { type: "webhook", url: "http://x", secret: "0123456789abcdef" } }, rules: [{ notify: ["nobody"], channels: ["m"] }] }, {})).toThrow(/unknown group "nobody"/);
    expect(() => parseNotifyConfig({ channels: { m: { type: "webhook", url: "http://x", secret: "0123456789abcdef" } }, rules: [{ notify: ["not an@address"], channels: ["m"] }] }, {})).toThrow(/group name, an email address or team:<name>/);
  });

  it("backs off exponentially, with jitter only when asked", () => {
    expect([1, 2, 3, 4].map((n) => backoffMs({ baseMs: 100, jitter: false }, n))).toEqual([100, 200, 400, 800]);
    expect(backoffMs({ baseMs: 100, jitter: true }, 3, () => 0)).toBe(200);
    expect(backoffMs({ baseMs: 100, jitter: true }, 3, () => 0.999)).toBeLessThanOrEqual(600);
    expect(backoffMs({ baseMs: 1000, jitter: false }, 40)).toBe(3_600_000);
  });
});

describe("config", () => {
  it("names the field of a bad file", () => {
    expect(() => parseNotifyConfig({ channels: { a: { type: "webhook", url: "ftp://x" , secret: "0123456789abcdef" } } }, {})).toThrow(/channels\.a\.url/);
    expect(() => parseNotifyConfig({ channels: {}, rules: [{ channels: ["nope"] }] }, {})).toThrow(/rules\.0\.channels: unknown channel "nope"/);
    expect(() => parseNotifyConfig({ channels: { m: { type: "email" } }, rules: [{ channels: ["m"] }] }, {})).toThrow(/smtp: an email channel needs smtp settings/);
    expect(() => parseNotifyConfig({ channels: {}, extra: 1 }, {})).toThrow(/Unrecognized key/);
    expect(() => parseNotifyConfig({ channels: { h: { type: "webhook", url: "http://x", secretEnv: "HOOK_SECRET" } } }, {})).toThrow(/channels\.h\.secretEnv/);
  });

  it("reads webhook secrets from the environment and fills defaults", () => {
    const c = parseNotifyConfig({ channels: { h: { type: "webhook", url: "http://x", secretEnv: "HOOK_SECRET" } } }, { HOOK_SECRET: "a-long-enough-secret" });
    expect(c.webhookSecrets).toEqual({ h: "a-long-enough-secret" });
    expect(c.retry).toEqual({ baseMs: 1000, maxAttempts: 6, jitter: true });
    expect(c.linkTtlMs).toBe(900_000);
  });

  it("the shipped sample (docs/notify.example.json) is valid", () => {
    const sample = JSON.parse(readFileSync(new URL("../../docs/notify.example.json", import.meta.url), "utf8")) as unknown;
    const whsec = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    const c = parseNotifyConfig(sample, {
      COUNTERSIGN_HOOK_SECRET: "a-hook-secret-of-some-length",
      COUNTERSIGN_LIFECYCLE_WHSEC: whsec,
      COUNTERSIGN_SLACK_SIGNING_SECRET: "slack-signing-secret",
      COUNTERSIGN_SLACK_BOT_TOKEN: "xoxb-bot-token",
      COUNTERSIGN_SMTP_PASSWORD: "smtp-password",
    });
    expect(Object.keys(c.channels)).toEqual(["ops-hook", "lifecycle-hook", "ops-slack", "ops-desk", "mail"]);
    expect(c.smtpPassword).toBe("smtp-password");
    const app = { signingSecret: "slack-signing-secret", botToken: "xoxb-bot-token", apiUrl: "https://slack.com/api" };
    expect(c.slackApps).toEqual({ "ops-slack": app, "ops-desk": app });
    expect(c.slackBots).toEqual({ "ops-desk": { botToken: "xoxb-bot-token", apiUrl: "https://slack.com/api", channel: "C0123456789" } });
  });

  it("lifecycle events need a Standard Webhooks secret; Slack buttons need a signing secret and a bot token", () => {
    const hook = (secret: string) => ({ channels: { h: { type: "webhook", url: "http://x", secret, events: ["response.failed"] } } });
    expect(() => parseNotifyConfig(hook("a-long-enough-plain-secret"))).toThrow(/channels\.h\.events: .*whsec_/);
    expect(() => parseNotifyConfig(hook(`whsec_${Buffer.alloc(8).toString("base64")}`))).toThrow(/at least 24 random bytes/);
    expect(parseNotifyConfig(hook(`whsec_${Buffer.alloc(32, 1).toString("base64")}`)).channels.h).toMatchObject({ events: ["response.failed"] });
    expect(() => parseNotifyConfig({ channels: { h: { type: "webhook", url: "http://x", secret: "a-long-enough-plain-secret", events: ["approval.requested"] } } })).toThrow(/channels\.h\.events\.0/);
    expect(() => parseNotifyConfig({ channels: { s: { type: "slack", url: "http://x", signingSecret: "signing-secret" } } })).toThrow(/channels\.s\.botToken: buttons need a bot token/);
    expect(() => parseNotifyConfig({ channels: { s: { type: "slack", url: "http://x", signingSecretEnv: "NOPE_SIGNING", botToken: "xoxb-token" } } }, {})).toThrow(/NOPE_SIGNING is not set/);
    expect(parseNotifyConfig({ channels: { s: { type: "slack", url: "http://x" } } }).slackApps).toEqual({});
  });

  it("a Slack channel posts either to its incoming webhook (url) or, with a bot token, to a channel id (chat.postMessage, chat.update)", () => {
    const bot = parseNotifyConfig({ channels: { s: { type: "slack", channel: "C0123456789", botTokenEnv: "BOT" } } }, { BOT: "xoxb-bot-token" });
    expect(bot.slackBots).toEqual({ s: { botToken: "xoxb-bot-token", apiUrl: "https://slack.com/api", channel: "C0123456789" } });
    expect(bot.slackApps).toEqual({});
    expect(parseNotifyConfig({ channels: { s: { type: "slack", url: "http://x", botToken: "xoxb-bot-token" } } }).slackBots).toEqual({});
    expect(() => parseNotifyConfig({ channels: { s: { type: "slack", channel: "C0123456789" } } })).toThrow(/channels\.s\.botToken: posting to a channel needs a bot token/);
    expect(() => parseNotifyConfig({ channels: { s: { type: "slack", url: "http://x", channel: "C0123456789", botToken: "xoxb-bot-token" } } })).toThrow(/channels\.s\.url: give exactly one of url .* and channel/);
    expect(() => parseNotifyConfig({ channels: { s: { type: "slack", botToken: "xoxb-bot-token" } } })).toThrow(/channels\.s\.url: give exactly one/);
    expect(() => parseNotifyConfig({ channels: { s: { type: "slack", channel: "#ops", botToken: "xoxb-bot-token" } } })).toThrow(/channels\.s\.channel: must be a Slack channel id/);
    expect(() => parseNotifyConfig({ channels: { s: { type: "slack", channel: "C0123456789", botTokenEnv: "NOPE_BOT" } } }, {})).toThrow(/NOPE_BOT is not set/);
  });
});

describe("Slack request signatures", () => {
  const now = new Date("2026-12-01T12:00:00Z");
  const ts = String(now.getTime() / 1000);
  const body = "payload=%7B%7D";
  it("accepts Slack's documented signature within 5 minutes and names the refusal otherwise", () => {
    const signature = `v0=${createHmac("sha256", "s3cret").update(`v0:${ts}:${body}`).digest("hex")}`;
    expect(verifySlackRequest(["other", "s3cret"], { signature, timestamp: ts }, body, now)).toEqual({ ok: true, index: 1 });
    expect(verifySlackRequest(["s3cret"], { signature, timestamp: ts }, `${body}x`, now)).toMatchObject({ ok: false, reason: expect.stringMatching(/signature does not match/) });
    expect(verifySlackRequest(["s3cret"], { signature, timestamp: ts }, body, new Date(now.getTime() + 301_000))).toMatchObject({ ok: false, reason: expect.stringMatching(/more than 5 minutes/) });
    expect(verifySlackRequest(["s3cret"], { timestamp: ts }, body, now)).toMatchObject({ ok: false, reason: expect.stringMatching(/no X-Slack-Signature/) });
    expect(verifySlackRequest(["s3cret"], { signature, timestamp: "12.5" }, body, now)).toMatchObject({ ok: false });
  });
});
