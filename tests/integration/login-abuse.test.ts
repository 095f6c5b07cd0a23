import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDbKind } from "../../db/testing";
import { parseTrustedProxies } from "../../server/config";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { rows } from "./helpers";

/**
 * Login abuse: the sign-in limiter counts the socket's address (X-Forwarded-For only from a
 * trusted proxy, right-most untrusted hop), each account backs off after repeated failures (in the
 * database, keyed on the lower-cased email whether or not it exists), and every 429 carries
 * `Retry-After`.
 */
const generous = { perSecond: 1000, burst: 1000 };
/** The test's "reverse proxy": requests sent from this loopback address. Requests from 127.0.0.1 come from an untrusted peer. */
const PROXY = "127.0.0.2";
let app: TTestApp;

beforeAll(async () => {
  app = await startTestApp({ rateLimit: { key: generous, ip: { perSecond: 1, burst: 3 }, signIn: { perSecond: 0.001, burst: 3 } }, trustedProxies: parseTrustedProxies(PROXY) });
}, 120_000);
afterAll(async () => {
  await app?.close();
});

/** One HTTP exchange sent from `localAddress` (fetch cannot choose it). */
function send(path: string, init: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string }): Promise<Response> {
  const { port } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method: init.method ?? "GET", headers: init.headers, localAddress: init.localAddress ?? "127.0.0.1" }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) for (const v of [value ?? []].flat()) headers.append(name, v);
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers }));
      });
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

/** A sign-in from `from` (default: straight from 127.0.0.1, an untrusted peer). */
const signIn = (email: string, password: string, headers: Record<string, string> = {}, from?: string) =>
  send("/api/auth/sign-in/email", { method: "POST", headers: { "content-type": "application/json", origin: app.url, ...headers }, body: JSON.stringify({ email, password }), localAddress: from });

/** A sign-in through the trusted proxy on behalf of `client` (so the per-address limit is the client's own). */
const viaProxy = (client: string, email: string, password: string) => signIn(email, password, { "x-forwarded-for": client }, PROXY);

let clients = 0;
/** A fresh client address behind the proxy, for tests about accounts rather than addresses. */
const freshClient = () => `192.0.2.${++clients}`;

/** A 429 in the product's shape: `Retry-After` (whole seconds ≥ 1) and `{"detail","code":"rate_limited"}`; returns the wait. */
async function expectRateLimited(res: Response): Promise<number> {
  const text = await res.text();
  expect(res.status, text).toBe(429);
  const retryAfter = res.headers.get("retry-after");
  expect(retryAfter, "Retry-After").toMatch(/^[1-9]\d*$/);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["code", "detail"]);
  expect(body.code).toBe("rate_limited");
  expect(body.detail).toContain(`${retryAfter} second`);
  return Number(retryAfter);
}

const nobody = (i: number | string) => `nobody-${i}-${Date.now()}@countersign.local`;

describe(`sign-in limit per client address (${testDbKind()})`, () => {
  test("a spoofed X-Forwarded-For from an untrusted peer does not escape the limiter", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await signIn(nobody(i), "wrong-password", { "x-forwarded-for": `198.51.100.${i}` })).status);
    expect(statuses).toEqual([401, 401, 401]);
    // Every further address the client claims is still the same socket address.
    for (const claimed of ["198.51.100.99", "203.0.113.5, 198.51.100.98", "127.0.0.2", "::1"]) {
      await expectRateLimited(await signIn(nobody(claimed), "wrong-password", { "x-forwarded-for": claimed }));
    }
  });

  test("from a trusted proxy the right-most untrusted hop is the client: each client has its own bucket, the left part proves nothing", async () => {
    for (let i = 0; i < 3; i++) expect((await viaProxy("198.51.100.1", nobody(i), "wrong-password")).status).toBe(401);
    await expectRateLimited(await viaProxy("198.51.100.1", nobody("a"), "wrong-password"));
    await expectRateLimited(await viaProxy("203.0.113.7, 198.51.100.1", nobody("b"), "wrong-password"));
    // Another client behind the same proxy is not affected, and neither is the proxy's own address.
    expect((await viaProxy("198.51.100.2", nobody("c"), "wrong-password")).status).toBe(401);
    expect((await signIn(nobody("d"), "wrong-password", {}, PROXY)).status).toBe(401);
  });

  test("the login session records the address the server resolved, never one the client wrote", async () => {
    const [proxiedUser, directUser] = await Promise.all([app.user("member"), app.user("member")]);
    const res = await signIn(proxiedUser.email, proxiedUser.password, { "x-forwarded-for": "203.0.113.66, 198.51.100.3", "x-countersign-client-address": "6.6.6.6" }, PROXY);
    expect(res.status, await res.text()).toBe(200);
    const recorded = await rows<{ ip_address: string | null }>(app, `select ip_address from login_sessions where user_id = '${proxiedUser.userId}'`);
    expect(recorded.map((r) => r.ip_address)).toEqual(["198.51.100.3"]);

    const spoofed = await viaProxy(freshClient(), directUser.email, directUser.password);
    expect(spoofed.status).toBe(200);
    const direct = await signIn(directUser.email, directUser.password, { "x-forwarded-for": "203.0.113.66", "x-countersign-client-address": "6.6.6.6" }, "127.0.0.3");
    expect(direct.status, await direct.text()).toBe(200);
    const addresses = await rows<{ ip_address: string | null }>(app, `select ip_address from login_sessions where user_id = '${directUser.userId}' order by created_at`);
    expect(addresses.map((r) => r.ip_address)).toEqual([`192.0.2.${clients}`, "127.0.0.3"]);
  });
});

describe(`per-account backoff (${testDbKind()})`, () => {
  let alice: TTestUser;
  let bob: TTestUser;
  beforeAll(async () => {
    [alice, bob] = await Promise.all([app.user("member", "Alice"), app.user("member", "Bob")]);
  });

  test("five failures make the account wait (even with the right password), doubling; others unaffected; success clears it", async () => {
    // The wait the server set, as stored: blocked_until − last_failure_at (Retry-After counts down with the clock).
    const waitSet = async () => {
      const [row] = await rows<{ last_failure_at: string | Date; blocked_until: string | Date }>(app, `select last_failure_at, blocked_until from sign_in_failures where account = '${alice.email.toLowerCase()}'`);
      return (new Date(row?.blocked_until ?? 0).getTime() - new Date(row?.last_failure_at ?? 0).getTime()) / 1000;
    };
    try {
      for (let i = 0; i < 5; i++) expect((await viaProxy(freshClient(), alice.email, `wrong-${i}`)).status).toBe(401);
      expect(await waitSet()).toBe(5);
      const first = await expectRateLimited(await viaProxy(freshClient(), alice.email, "wrong-again"));
      expect(first).toBeGreaterThanOrEqual(1);
      expect(first).toBeLessThanOrEqual(5);
      // The right password does not get through while the account waits, nor does another spelling of the email.
      await expectRateLimited(await viaProxy(freshClient(), alice.email, alice.password));
      await expectRateLimited(await viaProxy(freshClient(), ` ${alice.email.toUpperCase()} `, alice.password));
      // Bob is not affected.
      expect((await viaProxy(freshClient(), bob.email, bob.password)).status).toBe(200);

      // The server's clock moves past the wait (no sleeping: the outcome must not depend on load).
      app.clock.advance(5_000 + 200);
      expect((await viaProxy(freshClient(), alice.email, "wrong-after-the-wait")).status).toBe(401);
      expect(await waitSet()).toBe(10);
      const second = await expectRateLimited(await viaProxy(freshClient(), alice.email, alice.password));
      expect(second).toBeGreaterThanOrEqual(1);
      expect(second).toBeLessThanOrEqual(10);

      app.clock.advance(10_000 + 200);
      const ok = await viaProxy(freshClient(), alice.email, alice.password);
      expect(ok.status, await ok.text()).toBe(200);
      expect(await rows(app, `select * from sign_in_failures where account = '${alice.email.toLowerCase()}'`)).toEqual([]);
      // Cleared: a single mistake is a plain 401 again.
      expect((await viaProxy(freshClient(), alice.email, "one-typo")).status).toBe(401);
    } finally {
      app.clock.reset();
    }
  });

  test("an email without an account backs off exactly like a real one, so the answer tells nothing", async () => {
    const ghost = nobody("ghost");
    for (let i = 0; i < 5; i++) expect((await viaProxy(freshClient(), ghost, `wrong-${i}`)).status).toBe(401);
    const res = await viaProxy(freshClient(), ghost, "wrong");
    const wait = await expectRateLimited(res.clone());
    expect(await res.json()).toEqual({ detail: `Too many failed sign-ins for this account; try again in ${wait} seconds.`, code: "rate_limited" });
    expect((await rows<{ failures: number }>(app, `select failures from sign_in_failures where account = '${ghost}'`))[0]?.failures).toBe(5);
  });

  test("malformed sign-in bodies are refused and count nothing", async () => {
    const before = await rows(app, "select * from sign_in_failures order by account");
    for (const body of ['{"email":"not-an-email","password":"x"}', '{"password":"x"}', "[]", "{not json"]) {
      const res = await send("/api/auth/sign-in/email", { method: "POST", headers: { "content-type": "application/json", origin: app.url, "x-forwarded-for": freshClient() }, body, localAddress: PROXY });
      expect(res.status, body).toBeGreaterThanOrEqual(400);
      expect(res.status, body).toBeLessThan(500);
    }
    expect(await rows(app, "select * from sign_in_failures order by account")).toEqual(before);
  });

  test("the per-address limit of the API answers 429 with Retry-After too", async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => send("/v1/healthz", { localAddress: "127.0.0.4" })));
    const limited = answers.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const res of limited) await expectRateLimited(res);
  });
});
