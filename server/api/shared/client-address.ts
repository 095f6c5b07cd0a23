import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";
import type { TTrustedProxies } from "../../config";

/**
 * The address a request comes from, for rate limits and the login record. `X-Forwarded-For` is
 * believed only when the socket's peer is a proxy named in `COUNTERSIGN_TRUSTED_PROXIES`; anyone
 * else can write any address into it.
 */

export const NO_TRUSTED_PROXIES: TTrustedProxies = { list: new BlockList(), size: 0 };

/** `::ffff:10.0.0.1` and `10.0.0.1` are the same client. */
const unmapped = (address: string): string => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address);

const isTrusted = (trusted: TTrustedProxies, address: string): boolean => {
  const family = isIP(address);
  return family !== 0 && trusted.list.check(address, family === 4 ? "ipv4" : "ipv6");
};

/** One `X-Forwarded-For` hop as a bare address (some proxies add a port or brackets), or null. */
function hopAddress(hop: string): string | null {
  const text = hop.trim();
  const bracketed = text.match(/^\[([^\]]+)\](?::\d+)?$/)?.[1];
  const withoutPort = bracketed ?? (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(text) ? text.slice(0, text.lastIndexOf(":")) : text);
  const address = unmapped(withoutPort);
  return isIP(address) === 0 ? null : address;
}

/**
 * The client's address: the socket's peer, unless the peer is a trusted proxy; then the right-most
 * hop of `X-Forwarded-For` that is not itself a trusted proxy (hops left of it were written by
 * whoever sent the request and prove nothing). A malformed hop ends the walk at the last address
 * a trusted proxy vouched for.
 */
export function clientAddress(req: IncomingMessage, trusted: TTrustedProxies): string {
  let address = unmapped(req.socket.remoteAddress ?? "unknown");
  if (trusted.size === 0 || !isTrusted(trusted, address)) return address;
  const header = req.headers["x-forwarded-for"];
  const hops = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hopAddress(hops[i] ?? "");
    if (hop === null) break;
    address = hop;
    if (!isTrusted(trusted, hop)) break;
  }
  return address;
}

/**
 * The rate-limit key of an address: IPv6 clients usually hold a whole /64, so they are counted
 * per /64 (otherwise one client could rotate through 2^64 addresses and never be limited).
 */
export function addressBucketKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = "", tail = ""] = address.toLowerCase().split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === "" ? [] : tail.split(":");
  const groups = address.includes("::") ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.padStart(4, "0")).join(":")}::/64`;
}
