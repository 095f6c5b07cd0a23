import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { TBucketRate, TRateLimitConfig, TTrustedProxies } from "../../config";
import { addressBucketKey, clientAddress, NO_TRUSTED_PROXIES } from "../shared/client-address";
import { sendJson } from "../shared/respond";
import { refuseUpgradeWith } from "./errors";

/**
 * Per-credential token-bucket rate limits (API key, console session, else client address) and
 * the 429s they answer, always with `Retry-After`.
 */

const ZERO_WAIT = 0;

type TBucket = { tokens: number; at: number; verified: boolean };

/** Token buckets keyed by string; bounded in size (idle full buckets and then the oldest are dropped). */
export class TokenBuckets {
  private readonly buckets = new Map<string, TBucket>();

  constructor(
    private readonly rate: TBucketRate,
    private readonly maxEntries = 20_000,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.buckets.size;
  }

  /** The bucket refilled up to now (created full). */
  bucket(key: string): TBucket {
    const now = this.clock();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxEntries) this.prune(now);
      bucket = { tokens: this.rate.burst, at: now, verified: false };
      this.buckets.set(key, bucket);
      return bucket;
    }
    bucket.tokens = Math.min(this.rate.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.rate.perSecond);
    bucket.at = now;
    return bucket;
  }

  /** Seconds until a bucket with `tokens` holds one token again. */
  waitSeconds(bucket: TBucket): number {
    return bucket.tokens >= 1 ? ZERO_WAIT : Math.max(1, Math.ceil((1 - bucket.tokens) / this.rate.perSecond));
  }

  private prune(now: number): void {
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.rate.perSecond >= this.rate.burst) this.buckets.delete(key);
    }
    // Still full of active buckets: drop the oldest tenth (a dropped bucket restarts full).
    if (this.buckets.size >= this.maxEntries) {
      let drop = Math.ceil(this.maxEntries / 10);
      for (const key of this.buckets.keys()) {
        if (drop-- <= 0) break;
        this.buckets.delete(key);
      }
    }
  }
}

const SESSION_COOKIE = /(?:^|;\s*)(?:__Secure-)?better-auth\.session_token=([^;]+)/;

/** The credential a request carries (never stored: only its hash keys the bucket), or null. */
export function credentialOf(req: IncomingMessage, url: URL): string | null {
  const header = req.headers.authorization;
  if (header) return `h:${header}`;
  const token = url.searchParams.get("access_token");
  if (token) return `t:${token}`;
  const cookie = req.headers.cookie?.match(SESSION_COOKIE)?.[1];
  return cookie ? `c:${cookie}` : null;
}

const hash = (text: string): string => createHash("sha256").update(text).digest("base64url").slice(0, 32);

export type TAdmission = { ok: true; settle: (status: number) => void } | { ok: false; retryAfter: number };

/**
 * Rate limits per credential. A credential not yet seen to authenticate also spends from its
 * client IP's bucket, so rotating made-up keys cannot escape the per-IP limit; once a request
 * with it succeeds (any status but 401) it only spends from its own bucket.
 */
export class RateLimiter {
  private readonly keys: TokenBuckets;
  private readonly ips: TokenBuckets;
  private readonly signIns: TokenBuckets;

  constructor(
    readonly config: TRateLimitConfig,
    readonly trustedProxies: TTrustedProxies = NO_TRUSTED_PROXIES,
    /** Told each refusal and of which bucket (`key`, `ip`, `signin`, `frame`): the 429 metric. */
    private readonly onLimited: (bucket: "key" | "ip" | "signin" | "frame") => void = () => {},
  ) {
    this.keys = new TokenBuckets(config.key);
    this.ips = new TokenBuckets(config.ip);
    this.signIns = new TokenBuckets(config.signIn);
  }

  /** The bucket key of the request's client address (see client-address.ts for whom it believes). */
  private addressKey(req: IncomingMessage): string {
    return addressBucketKey(clientAddress(req, this.trustedProxies));
  }

  /** One password sign-in from the request's client address; 0 when admitted, else seconds to wait. */
  admitSignIn(req: IncomingMessage): number {
    const bucket = this.signIns.bucket(this.addressKey(req));
    if (bucket.tokens < 1) {
      this.onLimited("signin");
      return this.signIns.waitSeconds(bucket);
    }
    bucket.tokens -= 1;
    return ZERO_WAIT;
  }

  admit(req: IncomingMessage, url: URL): TAdmission {
    const credential = credentialOf(req, url);
    const ip = this.ips.bucket(this.addressKey(req));
    if (credential === null) {
      if (ip.tokens < 1) return this.refuse("ip", this.ips.waitSeconds(ip));
      ip.tokens -= 1;
      return { ok: true, settle: () => {} };
    }
    const key = this.keys.bucket(hash(credential));
    if (key.tokens < 1) return this.refuse("key", this.keys.waitSeconds(key));
    if (!key.verified && ip.tokens < 1) return this.refuse("ip", this.ips.waitSeconds(ip));
    key.tokens -= 1;
    if (!key.verified) ip.tokens -= 1;
    return {
      ok: true,
      settle: (status) => {
        key.verified = status !== 401 && status !== 429;
      },
    };
  }

  private refuse(bucket: "key" | "ip", retryAfter: number): TAdmission {
    this.onLimited(bucket);
    return { ok: false, retryAfter };
  }

  /** A per-connection frame admitter for `/v1/live`: spends from the socket's credential bucket. */
  frames(req: IncomingMessage, url: URL): () => number {
    const credential = credentialOf(req, url);
    const id = credential === null ? `ip:${this.addressKey(req)}` : hash(credential);
    return () => {
      const bucket = credential === null ? this.ips.bucket(id.slice(3)) : this.keys.bucket(id);
      if (bucket.tokens < 1) {
        this.onLimited("frame");
        return credential === null ? this.ips.waitSeconds(bucket) : this.keys.waitSeconds(bucket);
      }
      bucket.tokens -= 1;
      return ZERO_WAIT;
    };
  }
}

export const rateLimitedBody = (retryAfter: number) => ({
  detail: `Too many requests; slow down and retry after ${retryAfter} second${retryAfter === 1 ? "" : "s"}.`,
  code: "rate_limited",
});

export function sendRateLimited(res: ServerResponse, retryAfter: number): void {
  sendJson(res, 429, rateLimitedBody(retryAfter), { "retry-after": String(retryAfter) });
}

/** Answers a refused WebSocket upgrade with a plain HTTP 429 and closes the socket. */
export function refuseUpgrade(socket: Duplex, retryAfter: number): void {
  refuseUpgradeWith(socket, 429, rateLimitedBody(retryAfter), retryAfter);
}
