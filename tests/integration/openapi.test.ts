import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { testDbKind } from "../../db/testing";
import { V1_ROUTES } from "../../server/api/http/v1";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { execTurn, LiveClient, readSse, script } from "./helpers";

type TOperation = { operationId: string; requestBody?: unknown; responses: Record<string, unknown> };
type TDocument = { openapi: string; paths: Record<string, Record<string, TOperation>>; components: { schemas: Record<string, unknown> }; "x-websocket": Record<string, unknown> };

let app: TTestApp;
let operator: TTestUser;
let doc: TDocument;
let ajv: Ajv2020;

/** The document's schema `name`, compiled against the whole document so its `$ref`s resolve. */
const schemaOf = (name: string) => {
  const validate = ajv.getSchema(`openapi.json#/components/schemas/${name}`);
  if (!validate) throw new Error(`no schema ${name} in the document`);
  return validate;
};
const expectFits = (name: string, value: unknown) => {
  const validate = schemaOf(name);
  const fits = validate(value);
  expect(fits, `${name}: ${JSON.stringify(validate.errors)} for ${JSON.stringify(value).slice(0, 400)}`).toBe(true);
};
/** A raw WebSocket to `path` that keeps what it receives and how it closed. */
async function openSocket(path: string) {
  const ws = new WebSocket(`${app.url.replace(/^http/, "ws")}${path}`);
  const frames: unknown[] = [];
  ws.on("message", (data) => frames.push(JSON.parse(data.toString())));
  const closed = new Promise<{ code: number }>((resolve) => ws.on("close", (code) => resolve({ code })));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return { ws, frames, closed };
}
const operations = () => Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })));

beforeAll(async () => {
  app = await startTestApp();
  operator = await app.user("operator");
  const res = await app.api("/v1/openapi.json");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  doc = (await res.json()) as TDocument;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(doc, "openapi.json");
});
afterAll(async () => {
  await app?.close();
});

describe(`GET /v1/openapi.json (${testDbKind()})`, () => {
  it("is public, and a valid OpenAPI 3.1 document for the validator (which does refuse a broken one)", async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(await new Validator().validate(structuredClone(doc) as never)).toEqual({ valid: true });
    const health = (d: TDocument) => (d.paths["/v1/healthz"]?.get?.responses["200"] ?? {}) as { description?: string; content: Record<string, { schema: unknown }> };
    const undescribed = structuredClone(doc);
    delete health(undescribed).description;
    expect((await new Validator().validate(undescribed as never)).valid).toBe(false);
    const dangling = structuredClone(doc);
    health(dangling).content["application/json"] = { schema: { $ref: "#/components/schemas/Nope" } };
    expect(await new Validator().validate(dangling as never)).toMatchObject({ valid: false, errors: expect.stringContaining("Nope") });
  });

  /** Routes that exist only when something is configured: Slack's interactions need an interactive Slack channel. */
  const OFF_UNLESS_CONFIGURED = new Set(["/v1/slack/interactions"]);

  it("documents every route the server answers, and the server answers every documented operation", async () => {
    const ops = operations();
    for (const route of V1_ROUTES) {
      for (const d of route.docs) expect(doc.paths[d.path]?.[route.method.toLowerCase()]?.operationId, `${route.method} ${d.path}`).toBe(d.operationId);
    }
    expect(ops.length).toBe(V1_ROUTES.reduce((n, r) => n + r.docs.length, 0));
    expect(new Set(ops.map((o) => o.op.operationId)).size).toBe(ops.length);
    for (const { path, method } of ops) {
      const concrete = path.replace(/\{[^}]+\}/g, "x");
      const res = await app.api(concrete, { method, ...(method === "POST" ? { body: {} } : {}) });
      if (OFF_UNLESS_CONFIGURED.has(path)) {
        // Documented as 404 while its channel is not configured (this test app configures none).
        expect(res.status, `${method} ${path}`).toBe(404);
        continue;
      }
      // Without credentials: an authenticated route says 401, a public one answers; never "no such route" or 405.
      const body = (await res.json()) as { code?: string };
      expect([body.code, res.status], `${method} ${path}`).not.toContainEqual("not_found");
      expect(res.status, `${method} ${path}`).not.toBe(405);
      expect([200, 401], `${method} ${path}`).toContain(res.status);
    }
    const unknown = await app.api("/v1/nothing-here");
    expect(unknown.status).toBe(404);
  });

  it("documents both WebSocket routes, which the server upgrades and answers as documented", async () => {
    expect(Object.keys(doc["x-websocket"]).sort()).toEqual(["/v1/devices/connect", "/v1/live"]);
    const anonymous = await LiveClient.open(app, null, { connect: false });
    expect((await anonymous.closed).code).toBe(4401);
    const device = await openSocket("/v1/devices/connect");
    device.ws.send(JSON.stringify({ type: "hello" }));
    const closed = await device.closed;
    expect(closed.code).toBe(1008);
    expect(device.frames).toHaveLength(1);
    expectFits("DeviceServerFrame", device.frames[0]);
    expect(schemaOf("DeviceHelloFrame")({ type: "hello" })).toBe(false);
  });

  it("request bodies: the document's schema refuses exactly what the server refuses (strict, unknown fields)", async () => {
    const createBody = schemaOf("CreateResponseRequest");
    const cases: unknown[] = [
      { input: "hi", bogus: 1 },
      { input: "" },
      { sessionId: "s" },
      { input: script([{ text: "ok" }]), stream: "yes" },
      { input: script([{ text: "ok" }]), metadata: { ticket: 7 } },
    ];
    for (const body of cases) {
      const res = await app.api("/v1/responses", { key: operator.apiKey, body });
      const documentedValid = createBody(body);
      expect(res.status === 400, `${JSON.stringify(body)} → ${res.status}, document says ${documentedValid}`).toBe(!documentedValid);
      await res.body?.cancel();
    }
    const decisionBody = schemaOf("DecideApprovalRequest");
    for (const body of [{ decision: "approve", extra: true }, { decision: "maybe" }, { decision: "approve", grant: { days: 0 } }, { decision: "deny", message: "no" }]) {
      const res = await app.api("/v1/approvals/approval_missing", { key: operator.apiKey, body });
      // A body that parses reaches the lookup: 404 for an id that does not exist.
      expect(res.status, JSON.stringify(body)).toBe(decisionBody(body) ? 404 : 400);
      const error = await res.json();
      expectFits("Error", error);
    }
  });

  it("what the server sends fits the document: envelopes, SSE frames, decisions, /v1/live frames, gateway payloads, errors", async () => {
    const created = await app.api("/v1/responses", { key: operator.apiKey, body: { input: script([{ text: "Working", toolCalls: [{ name: "echo", arguments: { text: "a" } }] }, execTurn("true"), { text: "Done." }]), stream: true } });
    const sse = readSse(created);
    await sse.done;
    expect(sse.events.length).toBeGreaterThan(3);
    for (const event of sse.events) expectFits("StreamFrame", event.data);
    // The frame schema is closed over frame types: one the document does not name fails.
    expect(schemaOf("StreamFrame")({ type: "response.unknown", sequence: 1, responseId: "r", sessionId: "s" })).toBe(false)
    const boundary = sse.events.at(-1)?.data as unknown as { status: string; responseId: string; sessionId: string; requiredAction: { id: string } };
    expect(boundary.status).toBe("requires_action");

    const read = await app.api(`/v1/responses/${boundary.responseId}?sessionId=${boundary.sessionId}`, { key: operator.apiKey });
    expectFits("Envelope", await read.json());
    const decided = await app.api(`/v1/approvals/${boundary.requiredAction.id}`, { key: operator.apiKey, body: { decision: "approve" } });
    expect(decided.status).toBe(200);
    expectFits("DecideApprovalResponse200", await decided.json());
    const replay = readSse(await app.api(`/v1/responses/${boundary.responseId}/events?sessionId=${boundary.sessionId}`, { key: operator.apiKey }));
    await replay.done;
    expect(replay.events.map((e) => e.event)).toContain("approval.resolved");
    for (const event of replay.events) expectFits("StreamFrame", event.data);

    const live = await LiveClient.open(app, operator.apiKey);
    live.send({ type: "response.create", input: script([{ text: "over the socket" }]), requestId: "r1" });
    await live.waitFor((f) => f.type === "response.completed");
    live.send({ type: "response.cancel", responseId: "resp_unknown" });
    await live.waitFor((f) => f.type === "error");
    live.close();
    for (const frame of live.frames) {
      const documented = schemaOf("LiveServerFrame")(frame) || schemaOf("StreamFrame")(frame);
      expect(documented, JSON.stringify(frame)).toBe(true);
    }
    expect(schemaOf("LiveClientFrame")({ type: "response.cancel", responseId: "r", extra: 1 })).toBe(false);

    const asked = await app.api("/v1/gateway/question.request", {
      key: operator.apiKey,
      body: { questions: [{ questionId: "pick", header: "Pick", question: "Which one?", options: [{ label: "A" }, { label: "B" }] }] },
    });
    expectFits("QuestionRequestResponse200", await asked.json());
    const listed = await app.api("/v1/gateway/question.list", { key: operator.apiKey, body: {} });
    expectFits("QuestionListResponse200", await listed.json());
    const refused = await app.api("/v1/gateway/question.get", { key: operator.apiKey, body: { id: "x", extra: 1 } });
    expect(refused.status).toBe(400);
    expectFits("GatewayError", await refused.json());
    const grants = await app.api("/v1/grants?status=all", { key: operator.apiKey });
    expectFits("ListGrantsResponse200", await grants.json());
    expectFits("Error", await (await app.api("/v1/grants")).json());
  });

  it("the other suspensions and endings fit too: client tool, question asked and answered, cancel", async () => {
    const streamed = async (input: unknown) => {
      const sse = readSse(await app.api("/v1/responses", { key: operator.apiKey, body: { input, stream: true } }));
      await sse.done;
      for (const event of sse.events) expectFits("StreamFrame", event.data);
      return sse.events.at(-1)?.data as unknown as { responseId: string; sessionId: string; requiredAction: { id: string; questions: Array<{ questionId: string }> } };
    };
    const replayFits = async (responseId: string, sessionId: string, expected: string) => {
      const replay = readSse(await app.api(`/v1/responses/${responseId}/events?sessionId=${sessionId}`, { key: operator.apiKey }));
      await replay.done;
      expect(replay.events.map((e) => e.event)).toContain(expected);
      for (const event of replay.events) expectFits("StreamFrame", event.data);
    };

    const tool = await streamed(script([{ toolCalls: [{ name: "get_page_context", arguments: {} }] }, { text: "Seen." }]));
    const submitted = await app.api(`/v1/client-tools/${tool.requiredAction.id}`, { key: operator.apiKey, body: { output: { url: "https://example.com", title: "Example" } } });
    expect(submitted.status).toBe(200);
    expectFits("SubmitClientToolResultResponse200", await submitted.json());
    await replayFits(tool.responseId, tool.sessionId, "client_tool.requested");

    const asked = await streamed(script([{ toolCalls: [{ name: "ask_user", arguments: { questions: [{ id: "color", header: "Color", question: "Which?", options: [{ label: "Red" }, { label: "Blue" }] }] } }] }, { text: "Thanks." }]));
    const resolved = await app.api("/v1/gateway/question.resolve", { key: operator.apiKey, body: { id: asked.requiredAction.id, answers: { color: ["Red"] } } });
    expect(resolved.status).toBe(200);
    expectFits("QuestionResolveResponse200", await resolved.json());
    await replayFits(asked.responseId, asked.sessionId, "question.resolved");

    const waiting = await streamed(script([execTurn("true"), { text: "never" }]));
    const cancelled = await app.api(`/v1/responses/${waiting.responseId}/cancel`, { key: operator.apiKey, body: { reason: "changed my mind" } });
    expect(cancelled.status).toBe(200);
    const envelope = await cancelled.json();
    expect(envelope.status).toBe("cancelled");
    expectFits("Envelope", envelope);
    await replayFits(waiting.responseId, waiting.sessionId, "response.completed");
  });
});
