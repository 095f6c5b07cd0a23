import type { IncomingMessage } from "node:http";
import { describe, expect, test } from "vitest";
import { parseTrustedProxies } from "../../config";
import { RateLimiter } from "./rate-limit";

const req = (remoteAddress: string, forwardedFor?: string) =>
  ({ headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor }, socket: { remoteAddress } }) as unknown as IncomingMessage;

describe("sign-in limit per client address", () => {
  const config = { key: { perSecond: 1000, burst: 1000 }, ip: { perSecond: 1000, burst: 1000 }, signIn: { perSecond: 0.001, burst: 2 } };

  test("a spoofed X-Forwarded-For from an untrusted peer does not buy more attempts", () => {
    const limiter = new RateLimiter(config);
    const waits = Array.from({ length: 4 }, (_, i) => limiter.admitSignIn(req("203.0.113.9", `1.1.1.${i}`)));
    expect(waits.map((w) => w > 0)).toEqual([false, false, true, true]);
  });

  test("behind a trusted proxy each client has its own bucket", () => {
    const limiter = new RateLimiter(config, parseTrustedProxies("127.0.0.1"));
    expect([1, 2, 3].map(() => limiter.admitSignIn(req("127.0.0.1", "198.51.100.7")) > 0)).toEqual([false, false, true]);
    expect(limiter.admitSignIn(req("127.0.0.1", "198.51.100.8"))).toBe(0);
    expect(limiter.admitSignIn(req("127.0.0.1", "6.6.6.6, 198.51.100.7"))).toBeGreaterThan(0);
  });
});
