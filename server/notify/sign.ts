import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "X-Countersign-Signature";
export const TIMESTAMP_HEADER = "X-Countersign-Timestamp";
export const DELIVERY_HEADER = "X-Countersign-Delivery";
export const EVENT_HEADER = "X-Countersign-Event";

/** `sha256=<hex>` of HMAC-SHA256 over `${timestamp}.${body}`: the timestamp is signed so a captured body cannot be replayed later as new. */
export function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/**
 * The Standard Webhooks signature (https://www.standardwebhooks.com): `v1,` and base64 of
 * HMAC-SHA256, keyed with the base64-decoded part of a `whsec_` secret, over `id.timestamp.body`.
 */
export function standardSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/**
 * The headers of one signed webhook delivery. A channel with a `whsec_` secret also gets the
 * Standard Webhooks headers; `webhook-id` is the delivery id, the same on every retry, so a
 * receiver can drop a repeat.
 */
export function signedHeaders(secret: string, body: string, meta: { deliveryId: string; event: string; now: Date }): Record<string, string> {
  const timestamp = String(Math.floor(meta.now.getTime() / 1000));
  const standard: Record<string, string> = secret.startsWith("whsec_")
    ? { "webhook-id": meta.deliveryId, "webhook-timestamp": timestamp, "webhook-signature": standardSignature(secret, meta.deliveryId, timestamp, body) }
    : {};
  return {
    "content-type": "application/json",
    [SIGNATURE_HEADER]: signature(secret, timestamp, body),
    [TIMESTAMP_HEADER]: timestamp,
    [DELIVERY_HEADER]: meta.deliveryId,
    [EVENT_HEADER]: meta.event,
    ...standard,
  };
}

/**
 * What a receiver does: recompute the signature in constant time and refuse old timestamps.
 * Exported for receivers written in TypeScript and for tests.
 */
export function verifySignature(secret: string, headers: { signature?: string; timestamp?: string }, body: string, options: { now?: Date; toleranceSec?: number } = {}): boolean {
  if (!headers.signature || !headers.timestamp || !/^\d+$/.test(headers.timestamp)) return false;
  const age = Math.abs((options.now ?? new Date()).getTime() / 1000 - Number(headers.timestamp));
  if (age > (options.toleranceSec ?? 300)) return false;
  const expected = Buffer.from(signature(secret, headers.timestamp, body));
  const given = Buffer.from(headers.signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
