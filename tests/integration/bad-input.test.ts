import { request } from "node:http";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { approvals, clientToolRequests } from "../../db/schema";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, expectError, expectHealthy, getResponse, invoke, invokeApproval, lineCount, ok200, script, tableCounts } from "./helpers";

let app: TTestApp;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  // Starts runs and decides them: an operator may approve its own (separation of duties is tested elsewhere).
  operator = await app.user("operator");
});
afterAll(async () => {
  await app?.close();
});

/** Sends a request, asserts the error, then that nothing was written and the server still serves. */
async function rejects(send: () => Promise<Response>, status: number, code: string) {
  const before = await tableCounts(app);
  const body = await expectError(await send(), status, code);
  expect(await tableCounts(app)).toEqual(before);
  await expectHealthy(app);
  return body;
}

const post = (body: unknown) => app.api("/v1/responses", { key: operator.apiKey, body });
const raw = (path: string, rawBody: string, contentType = "application/json") =>
  app.api(path, { key: operator.apiKey, rawBody, headers: { "content-type": contentType } });

describe(`POST /v1/responses rejects bad bodies without writing anything (${testDbKind()})`, () => {
  it("400 for unknown fields, wrong types, empty input and bad scripts", async () => {
    const cases: unknown[] = [
      { input: "hi", extra: 1 },
      { input: "hi", stream: "yes" },
      { input: 42 },
      { input: ["a"] },
      { input: null },
      {},
      { input: "" },
      { input: "   " },
      { input: {} },
      { input: { script: [] } },
      { input: { script: [{ text: "x", bogus: true }] } },
      { input: { script: [{ text: "x" }], approvalTtlMs: 10 } },
      { input: { script: [{ text: "x" }], clientToolTtlMs: "1000" } },
      { input: "hi", metadata: "nope" },
      { input: "hi", metadata: ["a"] },
      { input: "hi", sessionId: "" },
      { input: "hi", agent: "no-such-agent" },
      { input: "hi", agent: "" },
      { input: "", stream: true },
      [],
      "hi",
      null,
    ];
    for (const body of cases) {
      const error = await rejects(() => post(body), 400, "invalid_request");
      expect(error.detail.length).toBeGreaterThan(5);
    }
    const unknown = await rejects(() => post({ input: "hi", extra: 1 }), 400, "invalid_request");
    expect(unknown.detail).toContain("extra");
  });

  it("404 for an unknown session", async () => {
    await rejects(() => post({ input: "hi", sessionId: "sess_00000000000000000000000000000000" }), 404, "not_found");
  });

  it("400 for malformed JSON, 415 for other content types, 413 past 1 MiB", async () => {
    await rejects(() => raw("/v1/responses", '{"input": "hi"'), 400, "invalid_json");
    await rejects(() => raw("/v1/responses", ""), 400, "invalid_json");
    await rejects(() => raw("/v1/responses", '{"input":"hi"}', "text/plain"), 415, "unsupported_media_type");
    await rejects(() => raw("/v1/responses", "input=hi", "application/x-www-form-urlencoded"), 415, "unsupported_media_type");
    await rejects(() => app.api("/v1/responses", { key: operator.apiKey, rawBody: '{"input":"hi"}' }), 415, "unsupported_media_type");
    const big = JSON.stringify({ input: "x".repeat(1024 * 1024 + 10) });
    await rejects(() => raw("/v1/responses", big), 413, "payload_too_large");
    // A JSON body of exactly 1 MiB is still read (and then judged on its content).
    const padding = 1024 * 1024 - JSON.stringify({ input: "" }).length;
    const exact = JSON.stringify({ input: "y".repeat(padding) });
    expect(Buffer.byteLength(exact)).toBe(1024 * 1024);
    const accepted = await ok200(await raw("/v1/responses", exact));
    expect(accepted.status).toBe("completed");
  });

  it("413 while reading a chunked body without Content-Length", async () => {
    const before = await tableCounts(app);
    const url = new URL("/v1/responses", app.url);
    const status = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(url, { method: "POST", headers: { authorization: `Bearer ${operator.apiKey}`, "content-type": "application/json", "transfer-encoding": "chunked" } }, (res) => {
        let body = "";
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.write('{"input":"');
      const chunk = "z".repeat(64 * 1024);
      let sent = 0;
      const pump = () => {
        while (sent < 20) {
          sent++;
          if (!req.write(chunk)) return void req.once("drain", pump);
        }
        req.end('"}');
      };
      pump();
    });
    expect(status.status).toBe(413);
    expect(JSON.parse(status.body)).toEqual({ detail: expect.any(String), code: "payload_too_large" });
    expect(await tableCounts(app)).toEqual(before);
    await expectHealthy(app);
  });
});

describe(`continuations reject bad input and keep state (${testDbKind()})`, () => {
  it("approvals: 400 for bad bodies, 404 for unknown ids, 409 for a second decision", async () => {
    const { env, approval, cwd } = await invokeApproval(app, operator.apiKey, "echo x >> count.txt");
    const path = `/v1/approvals/${approval.id}`;
    for (const body of [{}, { decision: "yes" }, { decision: "approve", reason: "x" }, { decision: true }, [], "approve"]) {
      await rejects(() => app.api(path, { key: operator.apiKey, body }), 400, "invalid_request");
    }
    await rejects(() => raw(path, "{decision:approve}"), 400, "invalid_json");
    await rejects(() => raw(path, '{"decision":"approve"}', "text/plain"), 415, "unsupported_media_type");
    await rejects(() => decide(app, operator.apiKey, "approval_00000000000000000000000000000000", "approve"), 404, "not_found");
    await rejects(() => decide(app, operator.apiKey, `approval_${"0".repeat(300)}`, "approve"), 404, "not_found");
    await rejects(() => app.api(`/v1/client-tools/client_tool_${"0".repeat(300)}`, { key: operator.apiKey, body: { output: {} } }), 404, "not_found");
    const [row] = await app.deps.db.select().from(approvals).where(eq(approvals.id, approval.id));
    expect(row?.status).toBe("pending");
    expect(lineCount(cwd, "count.txt")).toBe(0);

    expect((await ok200(await decide(app, operator.apiKey, approval.id, "approve"))).status).toBe("completed");
    await rejects(() => decide(app, operator.apiKey, approval.id, "approve"), 409, "already_decided");
    expect(lineCount(cwd, "count.txt")).toBe(1);
    expect((await ok200(await getResponse(app, operator.apiKey, env.id, env.sessionId))).status).toBe("completed");
  });

  it("client tools: 400 without output, 422 for output failing the schema (stays pending), 404 unknown, 409 second", async () => {
    const env = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "get_page_context" }] }, { text: "ok" }]));
    const id = env.requiredAction?.id as string;
    const path = `/v1/client-tools/${id}`;
    await rejects(() => app.api(path, { key: operator.apiKey, body: {} }), 400, "invalid_request");
    await rejects(() => app.api(path, { key: operator.apiKey, body: { output: {}, extra: 1 } }), 400, "invalid_request");
    for (const output of [{}, { url: "u" }, { url: 1, title: "t" }, "text", null]) {
      const error = await rejects(() => app.api(path, { key: operator.apiKey, body: { output } }), 422, "validation_failed");
      expect(error.detail).toContain("get_page_context");
    }
    await rejects(() => app.api("/v1/client-tools/client_tool_00000000000000000000000000000000", { key: operator.apiKey, body: { output: { url: "u", title: "t" } } }), 404, "not_found");
    const [row] = await app.deps.db.select().from(clientToolRequests).where(eq(clientToolRequests.id, id));
    expect(row?.status).toBe("pending");
    expect((await ok200(await getResponse(app, operator.apiKey, env.id, env.sessionId))).status).toBe("requires_action");

    expect((await ok200(await app.api(path, { key: operator.apiKey, body: { output: { url: "u", title: "t" } } }))).status).toBe("completed");
    await rejects(() => app.api(path, { key: operator.apiKey, body: { output: { url: "u", title: "t" } } }), 409, "already_submitted");
  });

  it("GET responses: 400 without sessionId, 404 for unknown ids; unknown routes and methods are errors too", async () => {
    const env = await invoke(app, operator.apiKey, "hi");
    await rejects(() => app.api(`/v1/responses/${env.id}`, { key: operator.apiKey }), 400, "invalid_request");
    await rejects(() => app.api(`/v1/responses/${env.id}?sessionId=`, { key: operator.apiKey }), 400, "invalid_request");
    await rejects(() => getResponse(app, operator.apiKey, "resp_00000000000000000000000000000000", env.sessionId), 404, "not_found");
    await rejects(() => app.api("/v1/nothing-here", { key: operator.apiKey }), 404, "not_found");
    await rejects(() => app.api("/v1/responses", { key: operator.apiKey }), 405, "method_not_allowed");
    await rejects(() => app.api(`/v1/responses/${env.id}/cancel`, { key: operator.apiKey, body: { reason: 5 } }), 400, "invalid_request");
    await rejects(() => app.api(`/v1/responses/${env.id}/cancel`, { key: operator.apiKey, body: { why: "x" } }), 400, "invalid_request");
    await rejects(() => app.api("/v1/responses/%zz?sessionId=x", { key: operator.apiKey }), 400, "invalid_request");
  });
});
