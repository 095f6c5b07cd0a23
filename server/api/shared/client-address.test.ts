import type { IncomingMessage } from "node:http";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseTrustedProxies } from "../../config";
import { addressBucketKey, clientAddress, NO_TRUSTED_PROXIES } from "./client-address";

const req = (remoteAddress: string, forwardedFor?: string) =>
  ({ headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor }, socket: { remoteAddress } }) as unknown as IncomingMessage;

describe("COUNTERSIGN_TRUSTED_PROXIES", () => {
  test("IPs and CIDR ranges of both families; anything else stops the boot with the bad entry named", () => {
    expect(parseTrustedProxies(undefined).size).toBe(0);
    expect(parseTrustedProxies(" ").size).toBe(0);
    expect(parseTrustedProxies("10.0.0.0/8, 127.0.0.1 ,fd00::/8,::1").size).toBe(4);
    for (const bad of ["10.0.0.0/33", "10.0.0.300", "proxy.local", "10.0.0.0/8/1", "fd00::/129", "10.0.0.0/-1", "*"]) {
      expect(() => parseTrustedProxies(`127.0.0.1,${bad}`), bad).toThrow(`Invalid COUNTERSIGN_TRUSTED_PROXIES entry "${bad}"`);
    }
  });
});

describe("client address", () => {
  const proxies = parseTrustedProxies("10.0.0.0/8,127.0.0.1");

  test("an untrusted peer is the client whatever X-Forwarded-For says", () => {
    expect(clientAddress(req("203.0.113.9", "1.2.3.4"), proxies)).toBe("203.0.113.9");
    expect(clientAddress(req("203.0.113.9", "1.2.3.4"), NO_TRUSTED_PROXIES)).toBe("203.0.113.9");
    expect(clientAddress(req("127.0.0.1", "1.2.3.4"), NO_TRUSTED_PROXIES)).toBe("127.0.0.1");
    expect(clientAddress(req("::ffff:198.51.100.7", "1.2.3.4"), proxies)).toBe("198.51.100.7");
  });

  test("behind trusted proxies: the right-most hop that is not a trusted proxy", () => {
    expect(clientAddress(req("127.0.0.1", "198.51.100.7"), proxies)).toBe("198.51.100.7");
    // The client wrote the left part itself: it cannot choose its own address.
    expect(clientAddress(req("127.0.0.1", "6.6.6.6, 198.51.100.7"), proxies)).toBe("198.51.100.7");
    expect(clientAddress(req("::ffff:127.0.0.1", "6.6.6.6, 198.51.100.7, 10.1.2.3"), proxies)).toBe("198.51.100.7");
    expect(clientAddress(req("127.0.0.1", "198.51.100.7:4711"), proxies)).toBe("198.51.100.7");
    expect(clientAddress(req("127.0.0.1", "[2001:db8::1]:443"), proxies)).toBe("2001:db8::1");
    // Garbage, or only proxies: the last address a trusted proxy vouched for.
    expect(clientAddress(req("127.0.0.1", "not-an-ip, 10.9.9.9"), proxies)).toBe("10.9.9.9");
    expect(clientAddress(req("127.0.0.1", ""), proxies)).toBe("127.0.0.1");
    expect(clientAddress(req("127.0.0.1"), proxies)).toBe("127.0.0.1");
  });

  test("whatever a client writes into the header, the address is one a trusted proxy vouched for or the peer", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()), { maxLength: 6 }), (spoofed) => {
        const header = [...spoofed, "198.51.100.7"].join(", ");
        expect(clientAddress(req("127.0.0.1", header), proxies)).toBe("198.51.100.7");
        expect(clientAddress(req("203.0.113.9", header), proxies)).toBe("203.0.113.9");
      }),
    );
  });

  test("IPv6 clients are counted per /64", () => {
    expect(addressBucketKey("2001:db8:1:2:aaaa::1")).toBe(addressBucketKey("2001:db8:1:2:ffff:1:2:3"));
    expect(addressBucketKey("2001:db8:1:2::1")).not.toBe(addressBucketKey("2001:db8:1:3::1"));
    expect(addressBucketKey("::1")).toBe("0000:0000:0000:0000::/64");
    expect(addressBucketKey("198.51.100.7")).toBe("198.51.100.7");
  });
});
