import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { apiKeys, loginSessions } from "../../db/schema";
import { createTestDb, testDbKind } from "../../db/testing";
import { createApp, type TApp } from "../../server/app";
import { startTestApp, testConfig, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { expectError, expectHealthy, invokeApproval, LiveClient, ok200, rows, tableCounts } from "./helpers";
import { sessionToken, signIn, trpcPost } from "./security-helpers";

/**
 * Browser-facing defenses: security headers on every response, CSRF protection for
 * cookie-authenticated mutations, WebSocket origin checks, session rotation and sign-out,
 * hashed API keys, request-target and size limits, and per-credential rate limits (429).
 */
let app: TTestApp;
let alice: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  alice = await app.user("member");
});
afterAll(async () => {
  await app?.close();
});

const HEADERS = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
};

function expectSecurityHeaders(res: Response, what: string): void {
  for (const [name, value] of Object.entries(HEADERS)) expect(res.headers.get(name), `${name} on ${what}`).toBe(value);
  expect(["no-referrer", "same-origin"], `referrer-policy on ${what}`).toContain(res.headers.get("referrer-policy"));
  const csp = res.headers.get("content-security-policy") ?? "";
  expect(csp, `CSP on ${what}`).toContain("frame-ancestors 'none'");
  expect(csp).toMatch(/default-src '(none|self)'/);
}

/** A raw HTTP/1.1 exchange (for request targets fetch would refuse to send). */
function rawRequest(url: string, text: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), "127.0.0.1", () => socket.write(text));
    let data = "";
    socket.on("data", (c) => {
      data += c.toString();
    });
    socket.on("close", () => resolve(data));
    socket.on("error", () => resolve(data));
    // A failure bound only (the server closes these connections itself).
    setTimeout(() => socket.destroy(), 30_000);
  });
}

describe(`security headers (${testDbKind()})`, () => {
  test("every kind of response carries them: JSON, errors, SSE, tRPC, auth, unknown paths", async () => {
    const created = await ok200(await app.api("/v1/responses", { key: alice.apiKey, body: { input: "hi" } }));
    const cases: Array<[string, () => Promise<Response>]> = [
      ["healthz", () => app.api("/v1/healthz")],
      ["401", () => app.api("/v1/responses", { body: { input: "x" } })],
      ["404 route", () => app.api("/v1/nothing", { key: alice.apiKey })],
      ["405", () => app.api("/v1/responses", { key: alice.apiKey })],
      ["413", () => app.api("/v1/responses", { key: alice.apiKey, rawBody: "x".repeat(1024 * 1024 + 1), headers: { "content-type": "application/json" } })],
      ["SSE events", () => app.api(`/v1/responses/${created.id}/events?sessionId=${created.sessionId}`, { key: alice.apiKey })],
      ["tRPC query", () => fetch(`${app.url}/api/trpc/me`, { headers: { authorization: `Bearer ${alice.apiKey}` } })],
      ["tRPC 401", () => fetch(`${app.url}/api/trpc/me`)],
      ["auth session", () => fetch(`${app.url}/api/auth/get-session`)],
      ["no such page", () => fetch(`${app.url}/some/page`)],
      ["gateway error", () => app.api("/v1/gateway/question.get", { key: alice.apiKey, body: { id: "nope" } })],
    ];
    for (const [what, send] of cases) {
      const res = await send();
      expectSecurityHeaders(res, what);
      await res.text();
    }
  });

  test("pages get a CSP that lets the Next.js console run (inline scripts, same-origin fetch/WebSocket) but nothing foreign", async () => {
    const db = await createTestDb();
    const dataDir = mkdtempSync(join(tmpdir(), "countersign-pages-"));
    let pageApp: TApp | null = null;
    try {
      pageApp = await createApp({ db, config: testConfig({ dataDir }), log: pino({ level: "silent" }), pages: { handle: async (_req, res) => void res.end("<!doctype html><p>console</p>") } });
      for (const path of ["/", "/login", "/responses/resp_x", "/_next/static/chunk.js"]) {
        const res = await fetch(`${pageApp.url}${path}`);
        expectSecurityHeaders(res, path);
        const csp = res.headers.get("content-security-policy") ?? "";
        expect(csp).toContain("default-src 'self'");
        expect(csp).toMatch(/script-src 'self' 'unsafe-inline'/);
        expect(csp).toContain("connect-src 'self'");
        expect(csp).toContain("object-src 'none'");
        expect(csp).toContain("base-uri 'self'");
        expect(csp).not.toMatch(/\*|https?:/);
        await res.text();
      }
      // API routes of the same process keep the strict API policy.
      const api = await fetch(`${pageApp.url}/v1/healthz`);
      expect(api.headers.get("content-security-policy")).toContain("default-src 'none'");
    } finally {
      await pageApp?.close();
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("a request target no URL parser accepts is a 400 with headers, and the server stays up", async () => {
    for (const target of ["http://[bad/x", "http://a b/", "http://[::1/v1/healthz"]) {
      const reply = await rawRequest(app.url, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(reply, target).toMatch(/^HTTP\/1\.1 400 /);
      if (reply.includes("content-type: application/json")) {
        expect(reply).toContain("x-content-type-options: nosniff");
        expect(reply).toContain('"code":"invalid_request"');
      }
    }
    const upgrade = await rawRequest(app.url, "GET http://[bad/v1/live HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n");
    expect(upgrade).not.toContain("101 Switching");
    await expectHealthy(app);
  });
});

describe(`size limits (${testDbKind()})`, () => {
  test("413 past the limit on /v1, tRPC and login; a WebSocket frame over 1 MiB (1009) or with invalid UTF-8 (1007) closes only that socket", async () => {
    const big = JSON.stringify({ input: "x".repeat(1024 * 1024) });
    await expectError(await app.api("/v1/responses", { key: alice.apiKey, rawBody: big, headers: { "content-type": "application/json" } }), 413, "payload_too_large");
    const trpc = await fetch(`${app.url}/api/trpc/responses.cancel`, { method: "POST", headers: { authorization: `Bearer ${alice.apiKey}`, "content-type": "application/json" }, body: big });
    expect(trpc.status).toBe(413);
    await trpc.text();
    const login = await fetch(`${app.url}/api/auth/sign-in/email`, { method: "POST", headers: { origin: app.url, "content-type": "application/json" }, body: JSON.stringify({ email: alice.email, password: "x".repeat(100_000) }) });
    await expectError(login, 413, "payload_too_large");
    const chunked = await fetch(`${app.url}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { origin: app.url, "content-type": "application/json" },
      body: new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(JSON.stringify({ email: alice.email, password: alice.password })));
          c.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    await expectError(chunked, 413, "payload_too_large");
    // These used to crash the whole process: the socket's 'error' event had no listener.
    const live = await LiveClient.open(app, alice.apiKey);
    live.send(JSON.stringify({ type: "response.create", input: "y".repeat(1024 * 1024 + 10) }));
    expect((await live.closed).code).toBe(1009);
    const anonymous = await LiveClient.open(app, null, { connect: false });
    anonymous.ws.send(Buffer.alloc(1024 * 1024 + 10, 0x61));
    expect([1009, 4401]).toContain((await anonymous.closed).code);
    const badUtf8 = await LiveClient.open(app, alice.apiKey);
    badUtf8.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    expect((await badUtf8.closed).code).toBe(1007);
    await expectHealthy(app);
  });
});

describe(`CSRF: cookie-authenticated mutations must be same-origin (${testDbKind()})`, () => {
  test("POST /v1 with the session cookie: same Origin or Sec-Fetch-Site same-origin passes; none, foreign or null is 403 and writes nothing", async () => {
    const cookie = await signIn(app, alice);
    const post = (headers: Record<string, string>) => app.api("/v1/responses", { body: { input: "csrf" }, headers: { cookie, ...headers } });
    expect((await ok200(await post({ origin: app.url }))).status).toBe("completed");
    expect((await ok200(await post({ "sec-fetch-site": "same-origin" }))).status).toBe("completed");
    const before = await tableCounts(app);
    const refused: Array<Record<string, string>> = [{}, { origin: "http://evil.example" }, { origin: "null" }, { origin: "not a url" }, { "sec-fetch-site": "cross-site" }, { origin: "http://evil.example", "sec-fetch-site": "same-origin" }];
    for (const headers of refused) {
      const error = await expectError(await post(headers), 403, "forbidden");
      expect(error.detail).toMatch(/Cross-site/);
    }
    expect(await tableCounts(app)).toEqual(before);
    // Reads with the cookie are not mutations and need no Origin.
    expect((await app.api("/v1/healthz", { headers: { cookie } })).status).toBe(200);
  });

  test("a cross-site form POST cannot cancel a run or decide an approval through the cookie", async () => {
    const cookie = await signIn(app, alice);
    const { env, approval } = await invokeApproval(app, alice.apiKey, "echo csrf >> csrf.txt");
    // What a hostile page's <form method=post> sends: the cookie, a foreign Origin, a form body.
    const form = { cookie, origin: "http://evil.example", "content-type": "application/x-www-form-urlencoded" };
    await expectError(await app.api(`/v1/responses/${env.id}/cancel`, { method: "POST", headers: form, rawBody: "" }), 403, "forbidden");
    const refused = await expectError(await app.api(`/v1/approvals/${approval.id}`, { method: "POST", headers: { ...form, "content-type": "application/json" }, rawBody: '{"decision":"approve"}' }), 403, "forbidden");
    // Refused as cross-site, before separation of duties (Alice may not decide her own run) is even asked.
    expect(refused.detail).toMatch(/Cross-site/);
    const [row] = await rows<{ status: string }>(app, `select status from responses where id = '${env.id}'`);
    expect(row?.status).toBe("requires_action");
  });

  test("tRPC mutations with the cookie are refused cross-site; same-origin ones and API-key callers are not affected", async () => {
    const cookie = await signIn(app, alice);
    const { env } = await invokeApproval(app, alice.apiKey, "echo t >> t.txt");
    const cross = await trpcPost(app, { cookie, headers: { origin: "http://evil.example" } }, "responses.cancel", { responseId: env.id });
    expect(cross.status).toBe(403);
    expect((cross.body as { error: { data: { code: string } } }).error.data.code).toBe("FORBIDDEN");
    const noOrigin = await trpcPost(app, { cookie }, "responses.cancel", { responseId: env.id });
    expect(noOrigin.status).toBe(403);
    const same = await trpcPost(app, { cookie, headers: { origin: app.url } }, "responses.cancel", { responseId: env.id });
    expect(same.status).toBe(200);
    // API keys are never sent implicitly by browsers: a foreign Origin does not matter for them.
    const other = await invokeApproval(app, alice.apiKey, "echo k >> k.txt");
    const byKey = await trpcPost(app, { key: alice.apiKey, headers: { origin: "http://evil.example" } }, "responses.cancel", { responseId: other.env.id });
    expect(byKey.status).toBe(200);
    expect((await app.api("/v1/responses", { key: alice.apiKey, body: { input: "key" }, headers: { origin: "http://evil.example" } })).status).toBe(200);
  });
});

describe(`WebSocket origin checks (${testDbKind()})`, () => {
  test("a cookie socket from our origin connects; foreign, null and malformed origins are closed 4403 and the server stays up", async () => {
    const cookie = await signIn(app, alice);
    const same = await LiveClient.open(app, null, { headers: { cookie, origin: app.url } });
    expect(same.sessionId).toMatch(/^sess_/);
    same.close();
    for (const origin of ["http://evil.example", "null", "::::", "javascript:alert(1)", `${app.url}.evil.example`]) {
      const cross = await LiveClient.open(app, null, { connect: false, headers: { cookie, origin } });
      expect((await cross.closed).code, origin).toBe(4403);
    }
    await expectHealthy(app);
    // An API-key socket is not tied to an origin (keys are not ambient credentials).
    const keyed = await LiveClient.open(app, alice.apiKey, { headers: { origin: "http://elsewhere.example" } });
    expect(keyed.sessionId).toMatch(/^sess_/);
    keyed.close();
  });
});

describe(`console sessions (${testDbKind()})`, () => {
  test("each sign-in issues a new session token; sign-out invalidates the old one and leaves the other", async () => {
    const first = await signIn(app, alice);
    const second = await signIn(app, alice);
    expect(sessionToken(first)).not.toBe(sessionToken(second));
    expect(sessionToken(first).length).toBeGreaterThanOrEqual(32);
    const me = (cookie: string) => fetch(`${app.url}/api/trpc/me`, { headers: { cookie } }).then((r) => r.status);
    expect(await me(first)).toBe(200);
    expect(await me(second)).toBe(200);
    const out = await fetch(`${app.url}/api/auth/sign-out`, { method: "POST", headers: { cookie: first, origin: app.url, "content-type": "application/json" }, body: "{}" });
    expect(out.status).toBe(200);
    expect(await me(first)).toBe(401);
    await expectError(await app.api("/v1/responses", { body: { input: "x" }, headers: { cookie: first, origin: app.url } }), 401, "unauthenticated");
    const socket = await LiveClient.open(app, null, { connect: false, headers: { cookie: first, origin: app.url } });
    expect((await socket.closed).code).toBe(4401);
    expect(await me(second)).toBe(200);
    // The session row of the first sign-in is gone.
    const tokens = (await app.deps.db.select({ token: loginSessions.token }).from(loginSessions)).map((r) => r.token);
    expect(tokens.some((t) => sessionToken(first).startsWith(t))).toBe(false);
  });

  test("a cross-site sign-out (foreign Origin) does not end the session", async () => {
    const cookie = await signIn(app, alice);
    const out = await fetch(`${app.url}/api/auth/sign-out`, { method: "POST", headers: { cookie, origin: "http://evil.example", "content-type": "application/json" }, body: "{}" });
    expect(out.status).toBeGreaterThanOrEqual(400);
    expect((await fetch(`${app.url}/api/trpc/me`, { headers: { cookie } })).status).toBe(200);
  });
});

describe(`API keys are stored hashed (${testDbKind()})`, () => {
  test("the api_keys table holds SHA-256 hashes and a short prefix, never a key", async () => {
    const users = [alice, await app.user("operator"), await app.user("admin")];
    const stored = await app.deps.db.select().from(apiKeys);
    const dump = JSON.stringify(stored);
    for (const u of users) {
      expect(dump).not.toContain(u.apiKey);
      expect(dump).not.toContain(u.apiKey.slice(3));
      const hash = createHash("sha256").update(u.apiKey).digest("hex");
      const row = stored.find((r) => r.userId === u.userId);
      expect(row?.keyHash).toBe(hash);
      expect(row?.prefix.length).toBeLessThanOrEqual(10);
    }
  });
});

describe(`rate limits (${testDbKind()})`, () => {
  let limited: TTestApp;
  let bob: TTestUser;
  let carol: TTestUser;
  // Buckets that refill one token per 100 s: no test here lasts long enough for a refill to change an
  // answer, however slow the machine (at 2/s, five requests taking over half a second let one more in).
  // Each test spends a fresh user's bucket; how a bucket refills over time is a unit test (guard.test.ts).
  beforeAll(async () => {
    process.env.COUNTERSIGN_RATE_LIMIT = "0.01:4,ip=0.01:6";
    try {
      limited = await startTestApp();
    } finally {
      delete process.env.COUNTERSIGN_RATE_LIMIT;
    }
    bob = await limited.user("member");
    carol = await limited.user("member");
  });
  afterAll(async () => {
    await limited?.close();
  });

  const expect429 = async (res: Response) => {
    const body = await expectError(res, 429, "rate_limited");
    const retry = Number(res.headers.get("retry-after"));
    expect(Number.isInteger(retry) && retry >= 1).toBe(true);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    return body;
  };

  test("per API key: past the burst 429 {detail, code:rate_limited} with Retry-After (when a token is back); another key is unaffected", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await limited.api("/v1/healthz", { key: bob.apiKey })).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    const res = await limited.api("/v1/responses", { key: bob.apiKey, body: { input: "too many" } });
    await expect429(res);
    // The bucket refills: a token is back after 1 / 0.01 s.
    expect(res.headers.get("retry-after")).toBe("100");
    expect((await limited.api("/v1/healthz", { key: carol.apiKey })).status).toBe(200);
  });

  test("tRPC and WebSocket upgrades spend from the same bucket; a refused upgrade is an HTTP 429", async () => {
    const dan = await limited.user("member");
    for (let i = 0; i < 4; i++) await fetch(`${limited.url}/api/trpc/me`, { headers: { authorization: `Bearer ${dan.apiKey}` } });
    const trpc = await fetch(`${limited.url}/api/trpc/me`, { headers: { authorization: `Bearer ${dan.apiKey}` } });
    expect(trpc.status).toBe(429);
    expect(await trpc.json()).toEqual({ detail: expect.any(String), code: "rate_limited" });
    const refused = await LiveClient.open(limited, dan.apiKey, { connect: false }).then(
      () => "open",
      (error: Error) => error.message,
    );
    expect(refused).toMatch(/429/);
  });

  test("WebSocket frames past the rate get an error frame rate_limited; the socket stays open", async () => {
    // A fresh bucket of 4: the upgrade and the connect frame spend two, the third of these frames finds it empty.
    const erin = await limited.user("member");
    const live = await LiveClient.open(limited, erin.apiKey);
    for (let i = 0; i < 6; i++) live.send({ type: "response.cancel", responseId: `resp_${i}` });
    const limitedFrame = await live.waitFor((f) => f.type === "error" && f.code === "rate_limited");
    expect(limitedFrame.detail).toMatch(/Too many frames/);
    expect(live.isOpen).toBe(true);
    live.close();
  });

  test("anonymous callers and made-up keys spend from the client IP's bucket: rotating keys does not escape it", async () => {
    // The IP bucket (6) is what the earlier tests' first, unverified requests left of it; it does not refill meanwhile.
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await limited.api("/v1/responses", { key: `cs_madeup${i}`, body: { input: "x" } })).status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(6);
    expect(statuses).toContain(429);
    await expect429(await limited.api("/v1/healthz"));
    // A key that works is verified and no longer depends on the IP bucket.
    expect((await limited.api("/v1/healthz", { key: carol.apiKey })).status).toBe(200);
  });
});
