import { expect } from "vitest";
import type { TTestApp } from "../../server/testing/test-app";
import { LiveClient, rows } from "./helpers";
import type { TCaller } from "./security-helpers";

/** A long-lived HTTP stream read as text: `ended` resolves when the server ends it. */
export type TOpenStream = { status: number; text: () => string; ended: Promise<void>; isEnded: () => boolean; cancel: () => Promise<void> };

/** The caller's credential as a browser or client sends it (a cookie from the console's own origin). */
const headersOf = (app: TTestApp, caller: TCaller): Record<string, string> => ({
  ...(caller.key ? { authorization: `Bearer ${caller.key}` } : {}),
  ...(caller.cookie ? { cookie: caller.cookie, origin: app.url } : {}),
  ...caller.headers,
});

/** Opens an SSE route (`/v1/...` or a tRPC subscription) and reads it until the server ends it. */
export async function openStream(app: TTestApp, caller: TCaller, path: string, init: { method?: string; body?: unknown } = {}): Promise<TOpenStream> {
  const headers = headersOf(app, caller);
  const res = await fetch(`${app.url}${path}`, {
    method: init.method ?? "GET",
    headers: { ...headers, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  let text = "";
  let ended = false;
  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) {
    text = await res.text();
    return { status: res.status, text: () => text, ended: Promise.resolve(), isEnded: () => true, cancel: async () => {} };
  }
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const done = (async () => {
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
    ended = true;
  })();
  return {
    status: res.status,
    text: () => text,
    ended: done,
    isEnded: () => ended,
    cancel: async () => {
      await reader.cancel().catch(() => {});
      await done;
    },
  };
}

/** Resolves with `promise` if it settles within `ms`, else fails naming `what`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until a stream shows `pattern` (e.g. its first value), so a later end is not a startup failure. */
export async function streamShows(stream: TOpenStream, pattern: RegExp, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pattern.test(stream.text())) {
    if (stream.isEnded() || Date.now() > deadline) throw new Error(`stream never showed ${pattern}; got ${JSON.stringify(stream.text().slice(0, 500))}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A `/v1/live` socket signed in with a console cookie (same-origin, as a browser sends it). */
export const openCookieSocket = (app: TTestApp, cookie: string, opts: { connect?: boolean } = {}) => LiveClient.open(app, null, { ...opts, headers: { cookie, origin: app.url } });

/** The approval's status as stored (reading rows to assert). */
export async function approvalStatus(app: TTestApp, approvalId: string): Promise<string> {
  const [row] = await rows<{ status: string }>(app, `select status from approvals where id = '${approvalId}'`);
  expect(row, `approval ${approvalId}`).toBeDefined();
  return (row as { status: string }).status;
}
