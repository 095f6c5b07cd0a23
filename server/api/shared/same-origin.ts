import type { IncomingMessage } from "node:http";

/*
 * Whether a browser request comes from this server's own pages: the CSRF rule of every
 * cookie-authenticated mutation (console session, answer link), WebSocket and login request.
 */

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export const isSafeMethod = (method: string | undefined): boolean => SAFE_METHODS.has((method ?? "GET").toUpperCase());

/** The origin of a URL string, or null when it is not an http(s) URL (e.g. `null`, garbage). */
export function parseOrigin(value: string): URL | null {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url : null;
  } catch {
    return null;
  }
}

/**
 * Did a browser send this request from our own origin? `Origin` must name this host (the Host
 * header, or `publicUrl`, COUNTERSIGN_PUBLIC_URL, behind a proxy); without a usable `Origin`,
 * `Sec-Fetch-Site: same-origin` (which pages cannot forge) is accepted.
 */
export function isSameOriginRequest(req: IncomingMessage, publicUrl?: string): boolean {
  const origin = req.headers.origin;
  if (typeof origin === "string" && origin !== "null") {
    const parsed = parseOrigin(origin);
    if (!parsed) return false;
    if (parsed.host === req.headers.host) return true;
    const publicOrigin = publicUrl ? parseOrigin(publicUrl) : null;
    return publicOrigin !== null && publicOrigin.origin === parsed.origin;
  }
  return req.headers["sec-fetch-site"] === "same-origin";
}
