import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDbKind } from "../../db/testing";
import { appRouter } from "../../server/api/trpc/root";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { expectHealthy, LiveClient } from "./helpers";

/**
 * Property-based abuse: fast-check generates bodies for every /v1 route (responses, approvals,
 * client tools, gateway methods, cancel, steer, AG-UI), query strings, Authorization headers,
 * WebSocket frames and tRPC inputs. Whatever arrives: never a 5xx, never a stack trace, always
 * the contract's error shape (`{detail, code}`, the gateway's `{ok:false, error}`, tRPC's error
 * envelope), the server keeps serving and never logs an internal error.
 * Set FC_SEED / FC_RUNS to replay or widen a run.
 */

const RUNS = Number(process.env.FC_RUNS ?? 100);
const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
const params = (numRuns = RUNS) => ({ numRuns, ...(seed === undefined ? {} : { seed }), endOnFailure: true });

let app: TTestApp;
let alice: TTestUser;
let admin: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  alice = await app.user("member");
  admin = await app.user("admin");
});
afterAll(async () => {
  await app?.close();
});

/** Statuses a client may legitimately see for bad or unlucky input (429 only for made-up credentials). */
const CLEAN = new Set([200, 202, 400, 401, 403, 404, 405, 409, 413, 415, 422, 429]);
const INTERNAL_LOG = /"msg":"(unhandled \/v1 error|tRPC internal error|request failed|gateway method failed|live follow failed)"/;

/** Checks one answer: a clean status, JSON of the right shape, or a well-formed SSE stream. */
async function expectClean(res: Response, what: string): Promise<void> {
  const text = await res.text();
  const context = `${what} → ${res.status} ${text.slice(0, 300)}`;
  expect(CLEAN.has(res.status), context).toBe(true);
  expect(text, context).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
  const type = res.headers.get("content-type") ?? "";
  if (type.startsWith("text/event-stream")) {
    for (const line of text.split("\n").filter((l) => l.startsWith("data:"))) expect(() => JSON.parse(line.slice(5)), context).not.toThrow();
    return;
  }
  expect(type, context).toMatch(/^application\/json/);
  const body = JSON.parse(text) as Record<string, unknown>;
  if (res.status < 400) return;
  if ("ok" in body) {
    expect(body.ok, context).toBe(false);
    const error = body.error as { code: unknown; message: unknown; details: { reason: unknown } };
    expect([typeof error.code, typeof error.message, typeof error.details.reason], context).toEqual(["string", "string", "string"]);
  } else if ("error" in body) {
    const error = body.error as { message: unknown; data: { code: unknown; httpStatus: unknown } };
    expect([typeof error.message, typeof error.data.code, error.data.httpStatus], context).toEqual(["string", "string", res.status]);
  } else {
    expect(Object.keys(body).sort(), context).toEqual(["code", "detail"]);
    expect(typeof body.detail === "string" && (body.detail as string).length > 0, context).toBe(true);
  }
}

/** encodeURIComponent that survives lone surrogates (they become U+FFFD, as a browser would send them). */
const enc = (s: string): string => encodeURIComponent(s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd"));

const send = (path: string, body: string, headers: Record<string, string> = {}, key: string | undefined = alice.apiKey) =>
  fetch(`${app.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body,
    signal: AbortSignal.timeout(30_000),
  });

// ---- arbitraries -------------------------------------------------------------------------------

/** Keys that have broken parsers before. */
const nastyKey = fc.constantFrom("__proto__", "constructor", "prototype", "toString", "", " ", "input", "decision", "output", "id", "answers", "\u0000", "💥");
const nastyString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom("", " ", "\u0000", "\ud800", "%zz", "../../etc/passwd", "approve", "deny", "<script>", "$" + "{jndi:ldap://x}", "' or 1=1 --", "null", "NaN", "1e309", "x".repeat(5000)),
);
const json = fc.jsonValue({ maxDepth: 4 });
const withExtras = <T extends Record<string, unknown>>(base: fc.Arbitrary<T>) =>
  fc.tuple(base, fc.dictionary(fc.oneof(nastyKey, fc.string({ maxLength: 8 })), json, { maxKeys: 2 })).map(([b, extra]) => ({ ...b, ...extra }));
/** A body: any JSON, a near-miss of the route's shape, or not JSON at all. */
const bodyOf = (shape: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: shape.map((v) => JSON.stringify(v)) },
    { weight: 2, arbitrary: withExtras(shape).map((v) => JSON.stringify(v)) },
    { weight: 2, arbitrary: json.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: nastyString },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }).map((n) => "[".repeat(n) + "]".repeat(n)) },
    { weight: 1, arbitrary: fc.constantFrom('{"a":', "{}}", "\u00ef\u00bb\u00bf{}", '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}') },
  );

const toolName = fc.constantFrom("echo", "ask_user", "get_page_context", "collect_card_details", "no_such_tool", "__proto__");
const scriptTurn = fc.record(
  { text: fc.oneof(nastyString, json), reasoning: nastyString, toolCalls: fc.array(fc.record({ name: toolName, arguments: json }, { requiredKeys: [] }), { maxLength: 2 }), usage: json },
  { requiredKeys: [] },
);
const scriptInput = fc.record({ script: fc.oneof(fc.array(scriptTurn, { maxLength: 3 }), json), approvalTtlMs: fc.oneof(fc.integer(), json), clientToolTtlMs: fc.oneof(fc.integer(), json) }, { requiredKeys: [] });
const responsesShape = fc.record(
  { input: fc.oneof(nastyString, scriptInput, json), sessionId: fc.oneof(nastyString, json), agent: fc.oneof(fc.constantFrom("scripted", "nope"), nastyString, json), metadata: json, stream: fc.oneof(fc.boolean(), json) },
  { requiredKeys: [] },
);
const decisionShape = fc.record({ decision: fc.oneof(fc.constantFrom("approve", "deny", "APPROVE", "yes"), nastyString, json) }, { requiredKeys: [] });
const outputShape = fc.record({ output: fc.oneof(json, fc.record({ url: fc.oneof(nastyString, json), title: fc.oneof(nastyString, json), text: json }, { requiredKeys: [] })) }, { requiredKeys: [] });
const steerShape = fc.record({ text: fc.oneof(nastyString, json) }, { requiredKeys: [] });
const cancelShape = fc.record({ reason: fc.oneof(nastyString, json) }, { requiredKeys: [] });
const question = fc.record(
  {
    questionId: fc.oneof(fc.constantFrom("q", "pick", "Bad-Id"), nastyString),
    header: nastyString,
    question: nastyString,
    options: fc.oneof(fc.array(fc.record({ label: fc.oneof(nastyString, json), value: json, description: json }, { requiredKeys: [] }), { maxLength: 5 }), json),
    multiSelect: json,
    isSecret: json,
    fields: json,
    presentation: json,
    url: json,
  },
  { requiredKeys: [] },
);
const gatewayShape = fc.record(
  {
    id: fc.oneof(nastyString, json),
    questions: fc.oneof(fc.array(question, { maxLength: 4 }), json),
    answers: fc.oneof(fc.dictionary(fc.oneof(nastyKey, fc.string({ maxLength: 6 })), fc.oneof(fc.array(nastyString, { maxLength: 3 }), json), { maxKeys: 3 }), json),
    timeoutMs: fc.oneof(fc.integer({ min: -10, max: 1500 }), json),
    includeResolutionId: json,
    cancel: json,
    resolutionId: fc.oneof(nastyString, json),
    sessionId: json,
    responseId: json,
    resolvedBy: json,
  },
  { requiredKeys: [] },
);
const aguiShape = fc.record(
  { threadId: fc.oneof(nastyString, json), runId: fc.oneof(nastyString, json), messages: fc.oneof(fc.array(fc.record({ id: nastyString, role: fc.constantFrom("user", "assistant", "tool", "x"), content: fc.oneof(nastyString, json) }, { requiredKeys: [] }), { maxLength: 3 }), json), tools: json, context: json, state: json, forwardedProps: fc.oneof(json, fc.record({ script: json, input: json, agent: json }, { requiredKeys: [] })), resume: json },
  { requiredKeys: [] },
);
const pathId = fc.oneof(fc.constantFrom("x", "resp_00000000000000000000000000000000", "approval_00000000000000000000000000000000", "%zz", "%00", "..", "a%2Fb"), fc.string({ minLength: 1, maxLength: 20 }).map(enc));

// ---- fixtures ------------------------------------------------------------------------------------

/** A pending approval of alice (ids that exist make the fuzz reach past the lookups). */
async function pendingApproval(): Promise<{ responseId: string; sessionId: string; approvalId: string }> {
  const res = await send("/v1/responses", JSON.stringify({ input: { script: [{ toolCalls: [{ name: "exec", arguments: { command: "true" } }] }, { text: "ok" }] } }));
  const env = (await res.json()) as { id: string; sessionId: string; requiredAction: { id: string } };
  return { responseId: env.id, sessionId: env.sessionId, approvalId: env.requiredAction.id };
}
async function pendingClientTool(): Promise<string> {
  const res = await send("/v1/responses", JSON.stringify({ input: { script: [{ toolCalls: [{ name: "get_page_context" }] }, { text: "ok" }] } }));
  return ((await res.json()) as { requiredAction: { id: string } }).requiredAction.id;
}

describe(`property-based abuse of every input (${testDbKind()})`, () => {
  test("POST /v1/responses: any body is answered cleanly", async () => {
    await fc.assert(fc.asyncProperty(bodyOf(responsesShape), async (body) => expectClean(await send("/v1/responses", body), `responses ${body.slice(0, 200)}`)), params());
  }, 240_000);

  test("POST /v1/approvals/{id}: any id and body; an existing approval is decided at most once", async () => {
    const target = await pendingApproval();
    let decided = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(pathId, fc.constant(target.approvalId)), bodyOf(decisionShape), async (id, body) => {
        // An admin decides Alice's approval (a member may not decide its own run's).
        const res = await send(`/v1/approvals/${id}`, body, {}, admin.apiKey);
        if (id === target.approvalId && res.status === 200) decided++;
        await expectClean(res, `approvals/${id} ${body.slice(0, 200)}`);
      }),
      params(),
    );
    expect(decided).toBeLessThanOrEqual(1);
  }, 240_000);

  test("POST /v1/client-tools/{id}: any id and output; invalid output leaves the request pending (422)", async () => {
    let target = await pendingClientTool();
    await fc.assert(
      fc.asyncProperty(fc.oneof(pathId, fc.constant("TARGET")), bodyOf(outputShape), async (id, body) => {
        const res = await send(`/v1/client-tools/${id === "TARGET" ? target : id}`, body);
        if (id === "TARGET" && res.status === 200) target = await pendingClientTool();
        await expectClean(res, `client-tools/${id} ${body.slice(0, 200)}`);
      }),
      params(),
    );
  }, 240_000);

  test("POST /v1/responses/{id}/cancel and /steer: any id and body", async () => {
    let target = await pendingApproval();
    await fc.assert(
      fc.asyncProperty(fc.oneof(pathId, fc.constant("TARGET")), fc.constantFrom("cancel", "steer"), fc.oneof(bodyOf(cancelShape), bodyOf(steerShape), fc.constant("")), async (id, action, body) => {
        const res = await send(`/v1/responses/${id === "TARGET" ? target.responseId : id}/${action}`, body, body === "" ? { "content-length": "0" } : {});
        if (id === "TARGET" && action === "cancel" && res.status === 200) target = await pendingApproval();
        await expectClean(res, `${action} ${id} ${body.slice(0, 200)}`);
      }),
      params(),
    );
  }, 240_000);

  test("POST /v1/gateway/{method}: every method (and made-up ones) with any params", async () => {
    const methods = fc.oneof(fc.constantFrom("question.request", "question.waitAnswer", "question.resolve", "question.get", "question.list"), fc.constantFrom("constructor", "__proto__", "toString", "question.", "x"), fc.string({ minLength: 1, maxLength: 12 }).map(enc));
    await fc.assert(
      fc.asyncProperty(methods, bodyOf(gatewayShape), async (method, body) => {
        // Keep generated long-polls short: a waitAnswer that validates waits at most its timeoutMs.
        const res = await send(`/v1/gateway/${method}`, body);
        await expectClean(res, `gateway ${method} ${body.slice(0, 200)}`);
      }),
      params(),
    );
  }, 240_000);

  test("POST /v1/agui: any RunAgentInput-like body", async () => {
    await fc.assert(fc.asyncProperty(bodyOf(aguiShape), async (body) => expectClean(await send("/v1/agui", body), `agui ${body.slice(0, 200)}`)), params(60));
  }, 240_000);

  test("GET routes: any id, sessionId, after and Last-Event-ID", async () => {
    const target = await pendingApproval();
    await fc.assert(
      fc.asyncProperty(fc.oneof(pathId, fc.constant(target.responseId)), fc.oneof(nastyString, fc.constant(target.sessionId)), fc.oneof(nastyString, fc.integer().map(String)), fc.boolean(), async (id, sessionId, after, events) => {
        const path = `/v1/responses/${id}${events ? "/events" : ""}?sessionId=${enc(sessionId)}&after=${enc(after)}`;
        // A failure bound only: a stream sends its headers at once (and is cancelled below); an answer
        // slowed by load must be read whole, not cut mid-body (1.5 s could).
        const abort = AbortSignal.timeout(30_000);
        const res = await fetch(`${app.url}${path}`, { headers: { authorization: `Bearer ${alice.apiKey}`, "last-event-id": after.replace(/[^\x20-\x7e]/g, "") }, signal: abort }).catch(() => null);
        if (!res) return; // a valid stream that stays open (the run waits): cut by the client
        if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
          expect(res.status).toBe(200);
          await res.body?.cancel().catch(() => {});
          return;
        }
        await expectClean(res, path);
      }),
      params(),
    );
  }, 240_000);

  test("Authorization headers, access tokens and cookies: anything unknown is 401 (400 for NUL, 429 when flooding), never 500", async () => {
    const header = fc.oneof(nastyString, fc.string({ maxLength: 60 }).map((s) => `Bearer ${s}`), fc.constantFrom("Bearer", "Bearer ", "Basic x", `Bearer ${alice.apiKey}x`, `bearer  cs_${"a".repeat(300)}`));
    await fc.assert(
      fc.asyncProperty(header, nastyString, nastyString, async (authorization, token, cookie) => {
        const clean = (s: string) => s.replace(/[^\x20-\x7e]/g, "");
        const headers: Record<string, string> = { authorization: clean(authorization), cookie: `better-auth.session_token=${clean(cookie)}` };
        const res = await send(`/v1/responses?access_token=${enc(token)}`, '{"input":"x"}', headers, undefined);
        await expectClean(res, `auth ${JSON.stringify(headers)}`);
        // 400 when the query string carries a NUL character; 429 once made-up keys drain the IP bucket.
        expect([400, 401, 429]).toContain(res.status);
      }),
      params(),
    );
  }, 240_000);

  test("WebSocket /v1/live: any sequence of frames gets error frames or a 1008 close, never a crash", async () => {
    const frameArb = fc.oneof(
      nastyString,
      json.map((v) => JSON.stringify(v)),
      fc
        .record(
          {
            type: fc.constantFrom("connect", "response.create", "response.cancel", "response.steer", "approval.decision", "client_tool.result", "session.close", "response.subscribe", "nope", "__proto__"),
            sessionId: fc.oneof(nastyString, json),
            input: fc.oneof(nastyString, json),
            responseId: fc.oneof(nastyString, json),
            approvalId: fc.oneof(nastyString, json),
            requestId: fc.oneof(nastyString, json),
            decision: fc.oneof(fc.constantFrom("approve", "deny"), json),
            output: json,
            text: fc.oneof(nastyString, json),
            after: fc.oneof(fc.integer(), json),
          },
          { requiredKeys: ["type"] },
        )
        .map((v) => JSON.stringify(v)),
    );
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(fc.oneof(frameArb, fc.constant("BINARY")), { minLength: 1, maxLength: 8 }), async (connectFirst, frames) => {
        const live = await LiveClient.open(app, alice.apiKey, { connect: connectFirst });
        try {
          for (const f of frames) {
            if (f === "BINARY") live.ws.send(Buffer.from([0, 159, 146, 150]));
            else if (!f.includes('"session.close"')) live.send(f);
          }
          if (live.closeInfo === null) {
            // Still open: it must still answer (an unknown response id is an error frame, not a close).
            // Frames are handled in order, so once the probe is answered (or the socket closed, e.g. for a
            // first frame that is no connect), every earlier frame's answer is in: no pause needed.
            live.send({ type: "response.cancel", responseId: "resp_probe" });
            await live.waitFor((f) => f.type === "error" && f.responseId === "resp_probe", 30_000).catch(async (error: Error) => {
              if (!live.closeInfo) throw error;
            });
          }
          for (const f of live.frames) {
            expect(typeof f.type).toBe("string");
            if (f.type === "error") expect([typeof f.code, typeof f.detail]).toEqual(["string", "string"]);
            expect(f.code).not.toBe("internal");
          }
          if (live.closeInfo) expect([1000, 1005, 1006, 1008, 1009]).toContain(live.closeInfo.code);
        } finally {
          live.close();
        }
      }),
      params(40),
    );
  }, 240_000);

  test("tRPC: every procedure with any input (query string or body) answers with tRPC's error envelope, never 500", async () => {
    const procedures = (appRouter as unknown as { _def: { procedures: Record<string, { _def: { type: string } }> } })._def.procedures;
    const names = Object.keys(procedures).filter((p) => procedures[p]?._def.type !== "subscription");
    const input = fc.oneof(json, fc.record({ approvalId: fc.oneof(nastyString, json), responseId: fc.oneof(nastyString, json), sessionId: fc.oneof(nastyString, json), id: fc.oneof(nastyString, json), ids: json, decision: json, bindingHash: json, text: json, status: json, questions: json, answers: json, timeoutMs: fc.oneof(fc.integer({ min: -1, max: 1500 }), json), name: fc.oneof(nastyString, json), deviceId: json, access: json }, { requiredKeys: [] }));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...names), input, fc.oneof(fc.constant(null), nastyString), async (name, value, raw) => {
        const type = procedures[name]?._def.type;
        const res =
          type === "mutation"
            ? await fetch(`${app.url}/api/trpc/${name}`, { method: "POST", headers: { authorization: `Bearer ${admin.apiKey}`, "content-type": "application/json" }, body: raw ?? JSON.stringify(value), signal: AbortSignal.timeout(30_000) })
            : await fetch(`${app.url}/api/trpc/${name}?input=${enc(raw ?? JSON.stringify(value))}`, { headers: { authorization: `Bearer ${admin.apiKey}` }, signal: AbortSignal.timeout(30_000) });
        await expectClean(res, `trpc ${name} ${String(raw ?? JSON.stringify(value)).slice(0, 200)}`);
      }),
      params(150),
    );
    // Subscriptions: bad inputs end in an in-stream error that is not a 500.
    for (const name of Object.keys(procedures).filter((p) => procedures[p]?._def.type === "subscription")) {
      for (const value of [null, 1, "x", { responseId: 5 }, { responseId: "resp_x", lastEventId: {} }, { extra: true }]) {
        // Read to its end (a bad input ends the stream with its error); the abort is a failure bound only.
        const res = await fetch(`${app.url}/api/trpc/${name}?input=${encodeURIComponent(JSON.stringify(value))}`, { headers: { authorization: `Bearer ${admin.apiKey}` }, signal: AbortSignal.timeout(30_000) }).catch(() => null);
        if (!res) continue;
        const text = await res.text().catch(() => "");
        expect(text, `${name} ${JSON.stringify(value)}`).not.toMatch(/"httpStatus":5\d\d/);
      }
    }
  }, 240_000);

  test("afterwards: the server is healthy and never logged an internal error", async () => {
    await expectHealthy(app);
    const internal = app
      .logs()
      .split("\n")
      .filter((l) => INTERNAL_LOG.test(l));
    expect(internal.slice(0, 5)).toEqual([]);
  });
});
