import type { IncomingMessage } from "node:http";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { isSameOriginRequest, parseOrigin } from "../shared/same-origin";
import { pageCsp } from "./guard";
import { DEFAULT_RATE_LIMIT, parseRateLimit } from "../../config";
import { RateLimiter, TokenBuckets } from "./rate-limit";

const req = (headers: Record<string, string>, remoteAddress = "127.0.0.1") => ({ headers, socket: { remoteAddress } }) as unknown as IncomingMessage;
const url = (path = "/v1/x") => new URL(path, "http://localhost");

describe("COUNTERSIGN_RATE_LIMIT", () => {
  test("parses rate, burst and the ip part; off disables; bad values are clear errors", () => {
    expect(parseRateLimit(undefined)).toEqual(parseRateLimit(DEFAULT_RATE_LIMIT));
    const signIn = { perSecond: 0.2, burst: 10 };
    expect(parseRateLimit("50:200")).toEqual({ key: { perSecond: 50, burst: 200 }, ip: { perSecond: 50, burst: 200 }, signIn });
    expect(parseRateLimit("500")).toEqual({ key: { perSecond: 500, burst: 1000 }, ip: { perSecond: 100, burst: 400 }, signIn });
    expect(parseRateLimit("10:20,ip=1:5")).toEqual({ key: { perSecond: 10, burst: 20 }, ip: { perSecond: 1, burst: 5 }, signIn });
    expect(parseRateLimit("0.5/3")).toEqual({ key: { perSecond: 0.5, burst: 3 }, ip: { perSecond: 0.5, burst: 3 }, signIn });
    expect(parseRateLimit("10:20, signin=1:3 ,ip=1:5")).toEqual({ key: { perSecond: 10, burst: 20 }, ip: { perSecond: 1, burst: 5 }, signIn: { perSecond: 1, burst: 3 } });
    for (const off of ["off", "OFF", "0", "none"]) expect(parseRateLimit(off)).toBeNull();
    for (const bad of ["fast", "-1", "10:0", "10:20,foo=1", "10:20,ip=x", "10:20,signin=0"]) expect(() => parseRateLimit(bad), bad).toThrow(/COUNTERSIGN_RATE_LIMIT/);
  });
});

describe("token buckets", () => {
  test("a bucket never admits more than burst + rate × elapsed", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 100 }), fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 200 }), (perSecond, burst, gaps) => {
        let now = 0;
        const buckets = new TokenBuckets({ perSecond, burst }, 100, () => now);
        let admitted = 0;
        for (const gap of gaps) {
          now += gap;
          const b = buckets.bucket("k");
          if (b.tokens >= 1) {
            b.tokens -= 1;
            admitted++;
          } else expect(buckets.waitSeconds(b)).toBeGreaterThanOrEqual(1);
        }
        expect(admitted).toBeLessThanOrEqual(burst + Math.floor((now / 1000) * perSecond) + 1);
      }),
    );
  });

  test("a drained bucket refills at its rate, up to its burst; the wait it announces is when a token is back", () => {
    let now = 0;
    const buckets = new TokenBuckets({ perSecond: 2, burst: 4 }, 100, () => now);
    for (let i = 0; i < 4; i++) buckets.bucket("k").tokens -= 1;
    expect(buckets.bucket("k").tokens).toBe(0);
    expect(buckets.waitSeconds(buckets.bucket("k"))).toBe(1);
    now += 499;
    expect(buckets.bucket("k").tokens).toBeLessThan(1);
    now += 1;
    expect(buckets.bucket("k").tokens).toBe(1);
    now += 60_000;
    expect(buckets.bucket("k").tokens).toBe(4);
  });

  test("the map stays bounded however many keys are seen", () => {
    const buckets = new TokenBuckets({ perSecond: 1, burst: 1 }, 50, () => 0);
    for (let i = 0; i < 10_000; i++) buckets.bucket(`k${i}`).tokens = 0;
    expect(buckets.size).toBeLessThanOrEqual(50);
  });
});

describe("rate limiter", () => {
  test("unverified credentials spend the IP bucket too; verified ones only their own", () => {
    const signIn = { perSecond: 0.001, burst: 1 };
    const limiter = new RateLimiter({ key: { perSecond: 0.001, burst: 100 }, ip: { perSecond: 0.001, burst: 3 }, signIn });
    const outcomes = Array.from({ length: 5 }, (_, i) => limiter.admit(req({ authorization: `Bearer cs_fake${i}` }), url()).ok);
    expect(outcomes).toEqual([true, true, true, false, false]);
    const good = new RateLimiter({ key: { perSecond: 0.001, burst: 100 }, ip: { perSecond: 0.001, burst: 1 }, signIn });
    const first = good.admit(req({ authorization: "Bearer cs_good" }), url());
    expect(first.ok).toBe(true);
    if (first.ok) first.settle(200);
    for (let i = 0; i < 20; i++) expect(good.admit(req({ authorization: "Bearer cs_good" }), url()).ok).toBe(true);
    expect(good.admit(req({}), url()).ok).toBe(false);
  });
});

describe("same-origin test", () => {
  test("Origin must name this host; without it Sec-Fetch-Site: same-origin is accepted; garbage never throws", () => {
    expect(isSameOriginRequest(req({ host: "a.test:3000", origin: "http://a.test:3000" }))).toBe(true);
    expect(isSameOriginRequest(req({ host: "a.test:3000", origin: "https://a.test:3000" }))).toBe(true);
    expect(isSameOriginRequest(req({ host: "a.test:3000", origin: "http://a.test:3001" }))).toBe(false);
    expect(isSameOriginRequest(req({ host: "a.test:3000", origin: "null" }))).toBe(false);
    expect(isSameOriginRequest(req({ host: "a.test:3000", "sec-fetch-site": "same-origin" }))).toBe(true);
    expect(isSameOriginRequest(req({ host: "a.test:3000", "sec-fetch-site": "same-site" }))).toBe(false);
    expect(isSameOriginRequest(req({ host: "a.test:3000" }))).toBe(false);
    fc.assert(
      fc.property(fc.string(), fc.string(), (origin, host) => {
        expect(typeof isSameOriginRequest(req({ host, origin }))).toBe("boolean");
        expect(() => parseOrigin(origin)).not.toThrow();
      }),
    );
  });

  test("the page CSP allows only what Next.js needs", () => {
    expect(pageCsp(false)).not.toContain("unsafe-eval");
    expect(pageCsp(true)).toContain("'unsafe-eval'");
    expect(pageCsp(false)).toContain("frame-ancestors 'none'");
  });
});
