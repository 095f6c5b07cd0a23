import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, invokeApproval, rows, sleep, tableCounts, waitUntil } from "./helpers";
import { gwOk, pick, questionCounts } from "./questions-helpers";
import { trpcGet } from "./security-helpers";

/**
 * Smaller leaks and limits: a body that trickles in is cut off (408) and writes nothing; bodies
 * that are not UTF-8 are 400 and change nothing; a client that goes away is not a server error;
 * members cannot map arbitrary user ids to names; another user's question id answers exactly
 * like an unknown one. (Answer links: answer-links.test.ts.)
 */
const BODY_TIMEOUT_MS = 1500;
let app: TTestApp;
let alice: TTestUser;
let bob: TTestUser;
let operator: TTestUser;
let auditor: TTestUser;

beforeAll(async () => {
  app = await startTestApp({ bodyTimeoutMs: BODY_TIMEOUT_MS });
  [alice, bob, operator, auditor] = await Promise.all([app.user("member", "Alice"), app.user("member", "Bob"), app.user("operator", "Olga"), app.user("auditor", "Audrey")]);
}, 120_000);
afterAll(async () => {
  await app?.close();
});

/** A raw connection: what the server sent, and when it closed. */
function rawConnection(to: TTestApp = app): { socket: Socket; received: () => string; closed: Promise<number> } {
  const { port } = new URL(to.url);
  const socket = connect(Number(port), "127.0.0.1");
  let data = "";
  socket.on("data", (chunk) => {
    data += chunk.toString("utf8");
  });
  socket.on("error", () => {});
  const opened = Date.now();
  const closed = new Promise<number>((resolve) => socket.on("close", () => resolve(Date.now() - opened)));
  return { socket, received: () => data, closed };
}

const head = (path: string, length: number, extra: Record<string, string> = {}) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${Object.entries(extra)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;

/** Sends the head and the first bytes of `body`, then one more byte every 300 ms, never finishing. */
async function trickle(path: string, body: string, extra: Record<string, string>) {
  const conn = rawConnection();
  conn.socket.write(`${head(path, Buffer.byteLength(body) + 50, extra)}${body.slice(0, 10)}`);
  let i = 10;
  const dripping = setInterval(() => {
    if (!conn.socket.destroyed && i < body.length) conn.socket.write(body[i++] ?? " ");
  }, 300);
  // Nothing but the server's deadline can end it (the body never completes); the wait is only a failure bound.
  const closedAfter = await Promise.race([conn.closed, sleep(30_000).then(() => -1)]);
  clearInterval(dripping);
  conn.socket.destroy();
  return { closedAfter, response: conn.received() };
}

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

describe(`a body that trickles in (${testDbKind()})`, () => {
  test("is cut off with 408 {detail, code} at the bound, the connection closes, and nothing is written", async () => {
    const before = { ...(await tableCounts(app)), ...(await questionCounts(app)) };
    const routes: Array<[string, string]> = [
      ["/v1/responses", JSON.stringify({ input: { script: [{ text: "never runs" }] } })],
      ["/v1/gateway/question.request", JSON.stringify({ questions: [pick()] })],
      ["/api/trpc/question.request", JSON.stringify({ questions: [pick()] })],
    ];
    for (const [path, body] of routes) {
      const { closedAfter, response } = await trickle(path, body, auth(alice.apiKey));
      expect(closedAfter, `${path} closed`).not.toBe(-1);
      expect(response, path).toMatch(/^HTTP\/1\.1 408 /);
      expect(response.toLowerCase(), path).toContain("connection: close");
      const json = JSON.parse(response.slice(response.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;
      expect(json).toEqual({ detail: "The request body did not arrive within 1.5 seconds; send it again in one piece.", code: "request_timeout" });
    }
    expect({ ...(await tableCounts(app)), ...(await questionCounts(app)) }).toEqual(before);
    expect(app.logs()).not.toMatch(/"level":50/);
  });

  test("a body sent in several pieces within the bound is served normally", async () => {
    // On a server with the default bound (30 s), which the pieces' pauses cannot come near however
    // loaded the machine (1.5 s could be reached by 2 × 400 ms pauses on a slow one).
    const roomy = await startTestApp();
    try {
      const member = await roomy.user("member");
      const body = JSON.stringify({ questions: [pick()] });
      const conn = rawConnection(roomy);
      conn.socket.write(head("/v1/gateway/question.request", Buffer.byteLength(body), { ...auth(member.apiKey), Connection: "close" }) + body.slice(0, 20));
      await sleep(400);
      conn.socket.write(body.slice(20, 40));
      await sleep(400);
      // Not end(): a half-closed request is abandoned by Node before it is answered.
      conn.socket.write(body.slice(40));
      await conn.closed;
      expect(conn.received()).toMatch(/^HTTP\/1\.1 200 /);
      expect(conn.received()).toContain('"ok":true');
    } finally {
      await roomy.close();
    }
  }, 180_000);
});

describe(`invalid UTF-8 in a JSON body (${testDbKind()})`, () => {
  // `{"input":"<FF FE 80>"}`: bytes that are no UTF-8 at all (not a replacement character).
  const invalid = Buffer.concat([Buffer.from('{"input":"'), Buffer.from([0xff, 0xfe, 0x80]), Buffer.from('"}')]);
  const invalidQuestion = Buffer.concat([Buffer.from('{"questions":[{"questionId":"q","header":"H","question":"'), Buffer.from([0xc3, 0x28]), Buffer.from('","options":[]}]}')]);
  const post = (path: string, body: Buffer, headers: Record<string, string> = {}) =>
    fetch(`${app.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: new Uint8Array(body) });

  test("is 400 with a sentence on every route that reads JSON, and changes nothing", async () => {
    const before = { ...(await tableCounts(app)), ...(await questionCounts(app)), failures: (await rows(app, "select * from sign_in_failures")).length };
    const v1 = await post("/v1/responses", invalid, auth(alice.apiKey));
    expect(v1.status).toBe(400);
    expect(await v1.json()).toEqual({ detail: "The body is not valid UTF-8; send JSON text encoded as UTF-8.", code: "invalid_json" });

    const gateway = await post("/v1/gateway/question.request", invalidQuestion, auth(alice.apiKey));
    expect(gateway.status).toBe(400);
    expect(await gateway.json()).toEqual({
      ok: false,
      error: { code: "INVALID_REQUEST", message: "The body is not valid UTF-8; send JSON text encoded as UTF-8.", details: { reason: "INVALID_PARAMS" } },
    });

    const trpc = await post("/api/trpc/question.request", invalidQuestion, auth(alice.apiKey));
    expect(trpc.status).toBe(400);
    const trpcError = ((await trpc.json()) as { error: { message: string; data: { domainCode: string } } }).error;
    expect(trpcError.message).toBe("The body is not valid UTF-8; send JSON text encoded as UTF-8.");
    expect(trpcError.data.domainCode).toBe("invalid_json");

    const batch = await post("/api/trpc/question.request?batch=1", Buffer.concat([Buffer.from('{"0":'), invalidQuestion, Buffer.from("}")]), auth(alice.apiKey));
    expect(batch.status).toBe(400);

    const signIn = await post("/api/auth/sign-in/email", Buffer.concat([Buffer.from(`{"email":"${alice.email}","password":"`), Buffer.from([0xff]), Buffer.from('"}')]), { origin: app.url });
    expect(signIn.status).toBe(400);
    expect(await signIn.json()).toEqual({ detail: "The body is not valid UTF-8; send JSON text encoded as UTF-8.", code: "invalid_json" });

    expect({ ...(await tableCounts(app)), ...(await questionCounts(app)), failures: (await rows(app, "select * from sign_in_failures")).length }).toEqual(before);
  });

  test("valid UTF-8 beyond ASCII is still accepted and kept exactly", async () => {
    const header = "Größe ✓ 😀";
    const created = await gwOk<{ id: string }>(app, alice.apiKey, "question.request", { questions: [{ questionId: "q", header: "Größe", question: header, options: [] }] });
    const [row] = await rows<{ questions: Array<{ question: string }> | string }>(app, `select questions from questions where id = '${created.id}'`);
    const stored = typeof row?.questions === "string" ? (JSON.parse(row.questions) as Array<{ question: string }>) : row?.questions;
    expect(stored?.[0]?.question).toBe(header);
  });
});

describe(`a client that goes away (${testDbKind()})`, () => {
  test("mid-body, on each kind of route, is not logged as an error", async () => {
    const before = await tableCounts(app);
    const requestIds: string[] = [];
    for (const path of ["/v1/responses", "/v1/gateway/question.request", "/api/trpc/question.request", "/api/auth/sign-in/email"]) {
      const requestId = randomBytes(16).toString("hex");
      requestIds.push(requestId);
      const conn = rawConnection();
      // "Expect: 100-continue": the server answers "100 Continue" once its handler has the request,
      // so the client goes away mid-body for sure (instead of after a pause that may be too short).
      conn.socket.write(head(path, 200, { ...auth(alice.apiKey), Origin: app.url, Expect: "100-continue", traceparent: `00-${requestId}-00f067aa0ba902b7-01` }));
      await waitUntil(() => conn.received().includes("100 Continue"), 30_000, `${path} to be received`);
      conn.socket.write('{"input":');
      conn.socket.destroy();
      await conn.closed;
    }
    // Each request has ended on the server (its access line is written then), and one more round
    // trip follows: whatever the server did about the aborted bodies has run before the check.
    await waitUntil(() => requestIds.every((id) => app.logs().includes(`"requestId":"${id}"`)), 30_000, "every request to end on the server");
    expect((await app.api("/v1/healthz")).status).toBe(200);
    expect(app.logs()).not.toMatch(/"level":50/);
    expect(await tableCounts(app)).toEqual(before);
  });
});

describe(`user names (${testDbKind()})`, () => {
  const people = async (key: string, ids: string[]) => {
    const res = await trpcGet(app, { key }, "users.names", { ids });
    expect(res.status).toBe(200);
    return (res.body as { result: { data: Record<string, { name: string; email: string }> } }).result.data;
  };
  /** The names only (each comes with its email: whoever may know a name knows the email beside it). */
  const names = async (key: string, ids: string[]) => Object.fromEntries(Object.entries(await people(key, ids)).map(([id, p]) => [id, p.name]));

  test("a member gets no names for unrelated ids, only its own and those who acted on its objects", async () => {
    const everyone = [alice.userId, bob.userId, operator.userId, auditor.userId, "user_does_not_exist"];
    expect(await names(alice.apiKey, everyone)).toEqual({ [alice.userId]: "Alice" });

    // Olga decides one of Alice's approvals: Alice may now see who decided.
    const { approval } = await invokeApproval(app, alice.apiKey, "echo names");
    expect((await decide(app, operator.apiKey, approval.id, "approve")).status).toBe(200);
    expect(await names(alice.apiKey, everyone)).toEqual({ [alice.userId]: "Alice", [operator.userId]: "Olga" });
    expect((await people(alice.apiKey, [operator.userId]))[operator.userId]).toEqual({ name: "Olga", email: operator.email });
    // Bob still learns nothing about anyone but himself.
    expect(await names(bob.apiKey, everyone)).toEqual({ [bob.userId]: "Bob" });
  });

  test("operators, admins and auditors still see every name", async () => {
    const expected = { [alice.userId]: "Alice", [bob.userId]: "Bob" };
    expect(await names(operator.apiKey, [alice.userId, bob.userId])).toEqual(expected);
    expect(await names(auditor.apiKey, [alice.userId, bob.userId])).toEqual(expected);
  });
});

describe(`another user's question id (${testDbKind()})`, () => {
  /** Status, headers (but the date and the per-request id) and body of a response, with the question id written as <id>. */
  async function snapshot(res: Response, id: string): Promise<string> {
    const headers = [...res.headers].filter(([name]) => name !== "date" && name !== "x-request-id").map(([name, value]) => `${name}: ${value}`);
    return `${res.status}\n${headers.sort().join("\n")}\n${(await res.text()).replaceAll(id, "<id>")}`;
  }
  const gatewayCall = (key: string, method: string, params: Record<string, unknown>) => app.api(`/v1/gateway/${method}`, { key, body: params });
  const trpcQuery = (key: string, path: string, input: unknown) => fetch(`${app.url}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers: auth(key) });
  const trpcMutation = (key: string, path: string, input: unknown) =>
    fetch(`${app.url}/api/trpc/${path}`, { method: "POST", headers: { ...auth(key), "content-type": "application/json" }, body: JSON.stringify(input) });

  test("answers byte for byte like an unknown id, over the Gateway and tRPC", async () => {
    const suffix = Date.now().toString(36);
    const foreign = `leak-a-${suffix}`;
    const unknown = `leak-z-${suffix}`;
    await gwOk(app, alice.apiKey, "question.request", { id: foreign, questions: [pick()] });
    const calls: Array<[string, (id: string) => Promise<Response>]> = [
      ["gateway question.get", (id) => gatewayCall(bob.apiKey, "question.get", { id })],
      ["gateway question.waitAnswer", (id) => gatewayCall(bob.apiKey, "question.waitAnswer", { id, timeoutMs: 1000 })],
      ["gateway question.resolve", (id) => gatewayCall(bob.apiKey, "question.resolve", { id, answers: { color: ["blue"] } })],
      ["gateway question.resolve cancel", (id) => gatewayCall(bob.apiKey, "question.resolve", { id, cancel: true })],
      ["tRPC question.get", (id) => trpcQuery(bob.apiKey, "question.get", { id })],
      ["tRPC question.waitAnswer", (id) => trpcQuery(bob.apiKey, "question.waitAnswer", { id, timeoutMs: 1000 })],
      ["tRPC question.resolve", (id) => trpcMutation(bob.apiKey, "question.resolve", { id, answers: { color: ["blue"] } })],
    ];
    for (const [what, call] of calls) {
      const [ofForeign, ofUnknown] = [await snapshot(await call(foreign), foreign), await snapshot(await call(unknown), unknown)];
      expect(ofForeign, what).toBe(ofUnknown);
      expect(ofForeign, what).toMatch(/^(400|404)\n/);
      expect(ofForeign, what).toContain("No question with id <id> was found.");
    }
    // Untouched by all of that.
    expect((await gwOk<{ question: { status: string } }>(app, alice.apiKey, "question.get", { id: foreign })).question.status).toBe("pending");
  });

  test("question.request with an id someone else uses answers exactly as with an id nobody uses: ids are the creator's own", async () => {
    // Ids are unique per creator: another person's id is free for the caller, and nothing in the answer tells that it was taken.
    const suffix = Date.now().toString(36);
    const alices = `taken-a-${suffix}`;
    const fresh = `fresh-b-${suffix}`;
    await gwOk(app, alice.apiKey, "question.request", { id: alices, questions: [pick()] });
    const request = (id: string) => gatewayCall(bob.apiKey, "question.request", { id, questions: [pick()], timeoutMs: 60_000 });
    const masked = (text: string) => text.replace(/"expiresAtMs":\d+/, '"expiresAtMs":0');
    const [ofForeign, ofFresh] = [masked(await snapshot(await request(alices), alices)), masked(await snapshot(await request(fresh), fresh))];
    expect(ofForeign).toBe(ofFresh);
    expect(ofForeign).toMatch(/^200\n/);
    // Bob's question under that id is his, and reads like his other one.
    const record = async (id: string) => masked(JSON.stringify((await gwOk<{ question: Record<string, unknown> }>(app, bob.apiKey, "question.get", { id })).question).replaceAll(id, "<id>")).replace(/"(createdAt|expiresAt)":"[^"]+"/g, '"$1":""').replace(/"expiresAtMs":\d+/g, "");
    expect(await record(alices)).toBe(await record(fresh));
    // Alice's is untouched, and hers.
    expect((await gwOk<{ question: { status: string; requester: { userId: string } } }>(app, alice.apiKey, "question.get", { id: alices })).question).toMatchObject({ status: "pending", requester: { userId: alice.userId } });
  });
});
