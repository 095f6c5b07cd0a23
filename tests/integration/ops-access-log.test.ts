import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { LiveClient } from "./helpers";

type TAccessLine = { access: true; requestId: string; method: string; path: string; userId: string | null; status: number; durationMs: number; msg: string };

let app: TTestApp;
let member: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  member = await app.user("member");
});
afterAll(async () => {
  await app?.close();
});

/** The access lines logged so far. */
const accessLines = (): TAccessLine[] =>
  app
    .logs()
    .split("\n")
    .filter((l) => l.includes('"access":true'))
    .map((l) => JSON.parse(l) as TAccessLine);

/** The access line of the request that got `requestId` (waits for it: it is written when the response ends). */
async function lineOf(requestId: string): Promise<TAccessLine> {
  // A generous deadline (1 s could pass on a loaded machine before the line is written).
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    const found = accessLines().filter((l) => l.requestId === requestId);
    if (found.length > 0) {
      expect(found).toHaveLength(1);
      return found[0] as TAccessLine;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no access line for ${requestId}`);
}

describe(`access log (${testDbKind()})`, () => {
  it("one line per request: request id (echoed as x-request-id), method, path, user id, status, duration; never the bearer token", async () => {
    const res = await app.api("/v1/grants?status=active", { key: member.apiKey });
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id") as string;
    expect(requestId).toMatch(/^[0-9a-f]{32}$/);
    const line = await lineOf(requestId);
    expect(line).toMatchObject({ access: true, requestId, method: "GET", path: "/v1/grants?status=active", userId: member.userId, status: 200, msg: "request" });
    expect(line.durationMs).toBeGreaterThanOrEqual(0);
    expect(Object.keys(line)).not.toContain("headers");
    expect(app.logs()).not.toContain(member.apiKey);
    // Another request, another id.
    const other = await app.api("/v1/grants", { key: member.apiKey });
    expect(other.headers.get("x-request-id")).not.toBe(requestId);
  });

  it("a credential in the query string is dropped from the logged path, and an anonymous request logs no user", async () => {
    const res = await app.api(`/v1/grants?access_token=${member.apiKey}&status=all&token=abc&api_key=k`);
    expect(res.status).toBe(200);
    const line = await lineOf(res.headers.get("x-request-id") as string);
    expect(line.path).toBe("/v1/grants?status=all");
    expect(line.userId).toBe(member.userId);
    const anonymous = await app.api("/v1/grants");
    expect(anonymous.status).toBe(401);
    expect(await lineOf(anonymous.headers.get("x-request-id") as string)).toMatchObject({ method: "GET", path: "/v1/grants", userId: null, status: 401 });
    const post = await app.api("/v1/responses", { key: member.apiKey, body: { input: "secret body text" } });
    expect(post.status).toBe(200);
    expect(await lineOf(post.headers.get("x-request-id") as string)).toMatchObject({ method: "POST", path: "/v1/responses", userId: member.userId, status: 200 });
    expect(app.logs()).not.toContain(member.apiKey);
    expect(app.logs()).not.toContain("secret body text");
  });

  it("an incoming traceparent's trace id becomes the request id; a malformed one is ignored", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const res = await app.api("/v1/healthz", { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    expect(res.headers.get("x-request-id")).toBe(traceId);
    expect(await lineOf(traceId)).toMatchObject({ method: "GET", path: "/v1/healthz", status: 200, userId: null });
    const bad = await app.api("/v1/healthz", { headers: { traceparent: `00-${"0".repeat(32)}-00f067aa0ba902b7-01` } });
    const badId = bad.headers.get("x-request-id") as string;
    expect(badId).toMatch(/^[0-9a-f]{32}$/);
    expect(badId).not.toBe("0".repeat(32));
  });

  it("a WebSocket upgrade is one line too, when its socket closes: 101 with the user, or the refusal's status; never the key", async () => {
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const live = await LiveClient.open(app, member.apiKey, { headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` }, query: `access_token=${member.apiKey}` });
    live.close();
    const accepted = await lineOf(traceId);
    expect(accepted).toMatchObject({ method: "GET", path: "/v1/live", userId: member.userId, status: 101, upgrade: "websocket" });
    const refusedId = "1af7651916cd43dd8448eb211c80319c";
    const refused = await LiveClient.open(app, "not-a-key", { connect: false, headers: { traceparent: `00-${refusedId}-b7ad6b7169203331-01` } });
    await refused.closed;
    // An unknown key: the socket is accepted and closed with 4401 at once (a browser could not read a refused handshake's body).
    expect(await lineOf(refusedId)).toMatchObject({ path: "/v1/live", userId: null, status: 101 });
    expect(app.logs()).not.toContain(member.apiKey);
  });
});
