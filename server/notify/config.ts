import { readFileSync } from "node:fs";
import { z } from "zod";
import { RISKS } from "../core/vocabulary";

const ZName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "must be 1–64 letters, digits, '_', '.' or '-'");
const ZHttpUrl = z.url({ protocol: /^https?$/ });
const ZMs = z.number().int().min(1).max(30 * 24 * 3600 * 1000);
const ZEnvName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, "must be an environment variable name");

/** Lifecycle facts a webhook channel may subscribe to (sent once each, Standard Webhooks signed). */
export const LIFECYCLE_EVENTS = ["approval.resolved", "question.resolved", "response.completed", "response.failed"] as const;
export type TLifecycleEvent = (typeof LIFECYCLE_EVENTS)[number];

const ZWebhookChannel = z
  .strictObject({
    type: z.literal("webhook"),
    url: ZHttpUrl,
    /** The HMAC key, read from this environment variable at boot (preferred: keeps it out of the file). */
    secretEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, "must be an environment variable name").optional(),
    secret: z.string().min(16, "must be at least 16 characters").optional(),
    /** Lifecycle facts this channel receives besides "please decide" (needs a `whsec_` secret: Standard Webhooks signing). */
    events: z.array(z.enum(LIFECYCLE_EVENTS)).min(1).optional(),
  })
  .refine((c) => Boolean(c.secretEnv) !== Boolean(c.secret), { message: "give exactly one of secretEnv and secret", path: ["secret"] });
const ZSlackChannel = z
  .strictObject({
    type: z.literal("slack"),
    /** An incoming webhook: messages are posted there and cannot be updated after a decision made elsewhere. */
    url: ZHttpUrl.optional(),
    /**
     * A Slack channel id (with a bot token, instead of `url`): messages are posted with
     * `chat.postMessage` and updated with `chat.update` once the approval is decided, wherever.
     */
    channel: z
      .string()
      .regex(/^[CGD][A-Z0-9]{6,20}$/, "must be a Slack channel id such as C0123456789 (chat.update needs the id, not the name)")
      .optional(),
    /** The Slack app's signing secret (or the environment variable holding it): messages get Approve / Deny / Reply buttons. */
    signingSecret: z.string().min(8).optional(),
    signingSecretEnv: ZEnvName.optional(),
    /** A bot token: `users:read` and `users:read.email` to look up who clicked (`users.info`); `chat:write` to post to `channel`. */
    botToken: z.string().min(8).optional(),
    botTokenEnv: ZEnvName.optional(),
    /** The Slack Web API base (tests point it at a fake). */
    apiUrl: ZHttpUrl.default("https://slack.com/api"),
  })
  .refine((c) => Boolean(c.url) !== Boolean(c.channel), { message: "give exactly one of url (an incoming webhook) and channel (a channel id, posted to with the bot token)", path: ["url"] })
  .refine((c) => !c.channel || Boolean(c.botToken || c.botTokenEnv), { message: "posting to a channel needs a bot token (botToken or botTokenEnv) with chat:write", path: ["botToken"] })
  .refine((c) => !(c.signingSecret && c.signingSecretEnv), { message: "give at most one of signingSecret and signingSecretEnv", path: ["signingSecret"] })
  .refine((c) => !(c.botToken && c.botTokenEnv), { message: "give at most one of botToken and botTokenEnv", path: ["botToken"] })
  .refine((c) => !(c.signingSecret || c.signingSecretEnv) || Boolean(c.botToken || c.botTokenEnv), { message: "buttons need a bot token (botToken or botTokenEnv) to map Slack users to Countersign users", path: ["botToken"] });
const ZEmailChannel = z.strictObject({ type: z.literal("email") });
const ZChannel = z.discriminatedUnion("type", [ZWebhookChannel, ZSlackChannel, ZEmailChannel]);

/** The prefix of an audience that names a team: the people single sign-on put in that group (docs/sso.md#teams). */
export const TEAM_AUDIENCE = "team:";

/** A group name from `groups`, one person's email address, or `team:<name>`. */
const ZAudience = z.union([ZName, z.email(), z.string().regex(/^team:\S{1,256}$/)], { error: "must be a group name, an email address or team:<name>" });

const ZRule = z.strictObject({
  /** Agent names this rule applies to; omitted: every agent (and gateway questions without a run). */
  agents: z.array(z.string().min(1).max(64)).min(1).optional(),
  /** Approval risks; omitted: every risk. Questions have no risk and match only rules without `risks`. */
  risks: z.array(z.enum(RISKS)).min(1).optional(),
  kinds: z.array(z.enum(["approval", "question"])).min(1).optional(),
  /** Who is told: group names from `groups`, people by email address, or `team:<name>` (the team's members). */
  notify: z.array(ZAudience).default([]),
  channels: z.array(ZName).min(1),
  remindBeforeMs: ZMs.optional(),
  escalateAfterMs: ZMs.optional(),
  escalateTo: z.array(ZAudience).min(1).optional(),
});

export const ZNotifyConfig = z
  .strictObject({
    /** The base of links in notifications; default: the server's own URL. */
    publicUrl: ZHttpUrl.optional(),
    smtp: z
      .strictObject({
        host: z.string().min(1),
        port: z.number().int().min(1).max(65535),
        /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
        secure: z.boolean().default(false),
        from: z.string().min(3),
        user: z.string().min(1).optional(),
        /** The SMTP password is read from this environment variable. */
        passEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, "must be an environment variable name").optional(),
      })
      .optional(),
    channels: z.record(ZName, ZChannel),
    groups: z.record(ZName, z.array(z.email()).min(1)).default({}),
    rules: z.array(ZRule).default([]),
    retry: z
      .strictObject({
        baseMs: ZMs.default(1000),
        maxAttempts: z.number().int().min(1).max(50).default(6),
        /** Randomizes each backoff by ±50% so many failed deliveries do not retry in lockstep. */
        jitter: z.boolean().default(true),
      })
      .default({ baseMs: 1000, maxAttempts: 6, jitter: true }),
    /** How long a link in an email works (capped by the approval's or question's expiry). */
    linkTtlMs: ZMs.default(15 * 60 * 1000),
    /** How often the notifier looks for work besides the wake-ups on the bus. */
    pollMs: z.number().int().min(10).max(60_000).default(1000),
    /** Timeout of one webhook, Slack or SMTP delivery. */
    timeoutMs: z.number().int().min(100).max(120_000).default(10_000),
  })
  .superRefine((c, ctx) => {
    c.rules.forEach((rule, i) => {
      for (const name of rule.channels) if (!c.channels[name]) ctx.addIssue({ code: "custom", path: ["rules", i, "channels"], message: `unknown channel "${name}"` });
      for (const name of [...rule.notify, ...(rule.escalateTo ?? [])]) {
        if (!c.groups[name] && !name.includes("@") && !name.startsWith(TEAM_AUDIENCE)) ctx.addIssue({ code: "custom", path: ["rules", i, "notify"], message: `unknown group "${name}"` });
      }
      if ((rule.escalateAfterMs === undefined) !== (rule.escalateTo === undefined)) ctx.addIssue({ code: "custom", path: ["rules", i, "escalateTo"], message: "escalateAfterMs and escalateTo go together" });
      const email = rule.channels.some((name) => c.channels[name]?.type === "email");
      if (email && !c.smtp) ctx.addIssue({ code: "custom", path: ["smtp"], message: "an email channel needs smtp settings" });
    });
  });

export type TNotifyConfigInput = z.input<typeof ZNotifyConfig>;
export type TNotifyFileConfig = z.infer<typeof ZNotifyConfig>;
export type TNotifyRule = TNotifyFileConfig["rules"][number];
export type TChannelConfig = TNotifyFileConfig["channels"][string];

/** A Slack channel whose messages carry buttons: how its interactions are verified and its users looked up. */
export type TSlackApp = { signingSecret: string; botToken: string; apiUrl: string };

/** A Slack channel posted to with the Web API (`chat.postMessage`, then `chat.update` on the outcome). */
export type TSlackBot = { botToken: string; apiUrl: string; channel: string };

/** The validated configuration with secrets resolved from the environment. */
export type TNotifyConfig = TNotifyFileConfig & {
  /** HMAC keys of webhook channels, by channel name. */
  webhookSecrets: Record<string, string>;
  /** Interactive Slack channels, by channel name. */
  slackApps: Record<string, TSlackApp>;
  /** Slack channels with a channel id, by channel name. */
  slackBots: Record<string, TSlackBot>;
  smtpPassword?: string;
};

/** A Standard Webhooks secret: `whsec_` and base64 of at least 24 random bytes. */
export const isStandardWebhookSecret = (secret: string): boolean => /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret) && Buffer.from(secret.slice(6), "base64").length >= 24;

/** Validates a parsed configuration object and resolves its secrets; errors name the field. */
export function parseNotifyConfig(raw: unknown, env: Readonly<Record<string, string | undefined>> = {}, source = "notification config"): TNotifyConfig {
  const parsed = ZNotifyConfig.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new Error(`Invalid ${source}: ${problems}`);
  }
  const config = parsed.data;
  const webhookSecrets: Record<string, string> = {};
  for (const [name, channel] of Object.entries(config.channels)) {
    if (channel.type !== "webhook") continue;
    const secret = channel.secret ?? (channel.secretEnv ? env[channel.secretEnv] : undefined);
    if (!secret || secret.length < 16) throw new Error(`Invalid ${source}: channels.${name}.secretEnv: the environment variable ${channel.secretEnv} must hold a secret of at least 16 characters`);
    if (channel.events && !isStandardWebhookSecret(secret)) {
      throw new Error(`Invalid ${source}: channels.${name}.events: lifecycle events are signed per Standard Webhooks, so the secret must be "whsec_" followed by base64 of at least 24 random bytes`);
    }
    webhookSecrets[name] = secret;
  }
  const slackApps: Record<string, TSlackApp> = {};
  const slackBots: Record<string, TSlackBot> = {};
  for (const [name, channel] of Object.entries(config.channels)) {
    if (channel.type !== "slack") continue;
    const interactive = Boolean(channel.signingSecret || channel.signingSecretEnv);
    if (!interactive && !channel.channel) continue;
    const botToken = channel.botToken ?? (channel.botTokenEnv ? env[channel.botTokenEnv] : undefined);
    if (!botToken) throw new Error(`Invalid ${source}: channels.${name}.botTokenEnv: the environment variable ${channel.botTokenEnv} is not set`);
    if (channel.channel) slackBots[name] = { botToken, apiUrl: channel.apiUrl, channel: channel.channel };
    if (!interactive) continue;
    const signingSecret = channel.signingSecret ?? (channel.signingSecretEnv ? env[channel.signingSecretEnv] : undefined);
    if (!signingSecret) throw new Error(`Invalid ${source}: channels.${name}.signingSecretEnv: the environment variable ${channel.signingSecretEnv} is not set`);
    slackApps[name] = { signingSecret, botToken, apiUrl: channel.apiUrl };
  }
  const smtpPassword = config.smtp?.passEnv ? env[config.smtp.passEnv] : undefined;
  if (config.smtp?.passEnv && !smtpPassword) throw new Error(`Invalid ${source}: smtp.passEnv: the environment variable ${config.smtp.passEnv} is not set`);
  return { ...config, webhookSecrets, slackApps, slackBots, smtpPassword };
}

/** Reads `COUNTERSIGN_NOTIFY_CONFIG` (a JSON file); null when unset (notifications off). */
export function loadNotifyConfig(env: Readonly<Record<string, string | undefined>>): TNotifyConfig | null {
  const path = env.COUNTERSIGN_NOTIFY_CONFIG;
  if (!path) return null;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(`Cannot read COUNTERSIGN_NOTIFY_CONFIG (${path}): ${error instanceof Error ? error.message : String(error)}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new Error(`COUNTERSIGN_NOTIFY_CONFIG (${path}) is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseNotifyConfig(raw, env, `COUNTERSIGN_NOTIFY_CONFIG (${path})`);
}
