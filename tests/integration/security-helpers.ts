import { expect } from "vitest";
import type { TTestApp, TTestUser } from "../../server/testing/test-app";

/** Signs a user in to the console and returns the `Cookie` header value of the new session. */
export async function signIn(app: TTestApp, user: TTestUser): Promise<string> {
  const res = await fetch(`${app.url}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: app.url },
    body: JSON.stringify({ email: user.email, password: user.password }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  expect(cookie).toContain("session_token=");
  return cookie;
}

/** The session token part of a cookie header (what identifies the session). */
export const sessionToken = (cookie: string): string => cookie.match(/session_token=([^;]+)/)?.[1] ?? "";

export type TCaller = { key?: string; cookie?: string; headers?: Record<string, string> };

const authHeaders = (caller: TCaller | null): Record<string, string> => ({
  ...(caller?.key ? { authorization: `Bearer ${caller.key}` } : {}),
  ...(caller?.cookie ? { cookie: caller.cookie } : {}),
  ...caller?.headers,
});

/** A tRPC query (GET, `?input=`); status and parsed body. */
export async function trpcGet(app: TTestApp, caller: TCaller | null, path: string, input?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const qs = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  const res = await fetch(`${app.url}/api/trpc/${path}${qs}`, { headers: authHeaders(caller) });
  const text = await res.text();
  expect(text).not.toMatch(/\n\s+at /);
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
}

/** A tRPC mutation (POST with a JSON body); status and parsed body. */
export async function trpcPost(app: TTestApp, caller: TCaller | null, path: string, input: unknown, rawBody?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${app.url}/api/trpc/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...authHeaders(caller) },
    body: rawBody ?? JSON.stringify(input),
  });
  const text = await res.text();
  expect(text).not.toMatch(/\n\s+at /);
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
}

/**
 * A tRPC subscription (SSE): reads until the first data or error event and stops. Returns 200 for
 * a stream that yields, else the in-stream error's httpStatus.
 */
export async function trpcSubscribe(app: TTestApp, caller: TCaller | null, path: string, input?: unknown): Promise<number> {
  const qs = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 30_000);
  try {
    const res = await fetch(`${app.url}/api/trpc/${path}${qs}`, { headers: authHeaders(caller), signal: abort.signal });
    if (!res.headers.get("content-type")?.startsWith("text/event-stream")) return res.status;
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    for (let i = 0; i < 50; i++) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      const error = text.match(/event: serialized-error\ndata: (.*)\n/);
      if (error) {
        await reader.cancel().catch(() => {});
        return (JSON.parse(error[1] as string) as { data: { httpStatus: number } }).data.httpStatus;
      }
      if (/(^|\n)data: (?!\{\}\n)/.test(text.replace(/event: connected\ndata: \{\}\n/, ""))) {
        await reader.cancel().catch(() => {});
        return 200;
      }
    }
    return -1;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

/** Every string value anywhere in a JSON-like value, for leak scans. */
export function allStrings(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) allStrings(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) allStrings(v, out);
  return out;
}
