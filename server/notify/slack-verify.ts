import { createHmac, timingSafeEqual } from "node:crypto";

/** Slack refuses requests older than this; so do we (a captured request cannot be replayed later). */
export const SLACK_TOLERANCE_SEC = 5 * 60;

/** `v0=` and hex of HMAC-SHA256 with the signing secret over `v0:<timestamp>:<raw body>`, as Slack documents it. */
export function slackSignature(signingSecret: string, timestamp: string, rawBody: string): string {
  return `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${rawBody}`).digest("hex")}`;
}

export type TSlackCheck = { ok: true; index: number } | { ok: false; reason: string };

/**
 * Verifies `X-Slack-Signature` / `X-Slack-Request-Timestamp` against each configured signing
 * secret in constant time: the timestamp must be within 5 minutes of now, the signature exact.
 * Returns which secret matched, or the reason for the refusal.
 */
export function verifySlackRequest(secrets: readonly string[], headers: { signature?: string; timestamp?: string }, rawBody: string, now: Date): TSlackCheck {
  if (!headers.signature || !headers.timestamp) return { ok: false, reason: "The request has no X-Slack-Signature or X-Slack-Request-Timestamp header; nothing was decided." };
  if (!/^\d{1,12}$/.test(headers.timestamp)) return { ok: false, reason: "X-Slack-Request-Timestamp is not a Unix time in seconds; nothing was decided." };
  if (Math.abs(now.getTime() / 1000 - Number(headers.timestamp)) > SLACK_TOLERANCE_SEC) {
    return { ok: false, reason: "The Slack request timestamp is more than 5 minutes away from the server's clock (a replayed or delayed request); nothing was decided." };
  }
  const given = Buffer.from(headers.signature);
  let matched = -1;
  secrets.forEach((secret, index) => {
    const expected = Buffer.from(slackSignature(secret, headers.timestamp as string, rawBody));
    // Every secret is compared (no early exit), each comparison in constant time.
    if (expected.length === given.length && timingSafeEqual(expected, given) && matched < 0) matched = index;
  });
  return matched >= 0 ? { ok: true, index: matched } : { ok: false, reason: "The Slack request signature does not match the signing secret; nothing was decided." };
}
