import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { invokeApproval, ok200 } from "./helpers";

/** A span as OTLP/HTTP JSON carries it (ids in hex). */
type TOtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number; boolValue?: boolean } }>;
  links?: Array<{ traceId: string; spanId: string }>;
};

let sink: Server;
const received: TOtlpSpan[] = [];
const paths: string[] = [];
let app: TTestApp;
let member: TTestUser;
let operator: TTestUser;
const saved: Record<string, string | undefined> = {};

/** The local OTLP/HTTP receiver: keeps every span posted to /v1/traces (JSON encoding). */
beforeAll(async () => {
  sink = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      paths.push(`${req.method} ${req.url} ${req.headers["content-type"]}`);
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: TOtlpSpan[] }> }> };
      for (const r of body.resourceSpans) for (const s of r.scopeSpans) received.push(...s.spans);
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  for (const name of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_BSP_SCHEDULE_DELAY"]) saved[name] = process.env[name];
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  process.env.OTEL_BSP_SCHEDULE_DELAY = "100";
  app = await startTestApp();
  member = await app.user("member");
  operator = await app.user("operator");
});
afterAll(async () => {
  await app?.close();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await new Promise<void>((resolve) => sink?.close(() => resolve()));
});

const attr = (span: TOtlpSpan, key: string): unknown => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : v?.boolValue);
};

async function spansUntil(what: string, done: (spans: TOtlpSpan[]) => boolean): Promise<TOtlpSpan[]> {
  // A generous deadline (10 s could pass on a loaded machine before a batch is exported).
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    if (done(received)) return received;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}; got ${received.map((s) => s.name).join(", ")}`);
}

describe(`OpenTelemetry spans over OTLP/HTTP (${testDbKind()})`, () => {
  it("run → turn → tool call, ended at the suspension; the decision (decider, channel) with the approval's wait under it; the resumed run a new span linked to it", async () => {
    const { env, approval } = await invokeApproval(app, member.apiKey, "echo traced");
    const first = await spansUntil("the suspended run", (s) => s.some((x) => x.name === "countersign.run" && attr(x, "countersign.response_id") === env.id));
    const run = first.find((s) => s.name === "countersign.run" && attr(s, "countersign.response_id") === env.id) as TOtlpSpan;
    expect(attr(run, "countersign.outcome")).toBe("suspended");
    expect(attr(run, "countersign.agent")).toBe("scripted");
    const turn = first.find((s) => s.name === "countersign.turn" && s.parentSpanId === run.spanId) as TOtlpSpan;
    expect(turn, "a turn under the run").toBeDefined();
    expect(turn.traceId).toBe(run.traceId);
    expect(attr(turn, "countersign.outcome")).toBe("suspended");
    const tool = first.find((s) => s.name === "countersign.tool_call" && s.parentSpanId === turn.spanId) as TOtlpSpan;
    expect(tool, "a tool call under the turn").toBeDefined();
    expect(attr(tool, "countersign.tool.name")).toBe("exec");
    expect(attr(tool, "countersign.outcome")).toBe("suspended");
    // The request that started the run is the root of its trace, a server span.
    const createRequest = first.find((s) => s.spanId === run.parentSpanId) as TOtlpSpan;
    expect(createRequest.name).toBe("countersign.http.request");
    expect(createRequest.kind).toBe(2);
    expect(attr(createRequest, "http.response.status_code")).toBe(200);

    // The decision arrives with a traceparent: its trace id is the request id, and the request span's parent.
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const parentId = "b7ad6b7169203331";
    const res = await app.api(`/v1/approvals/${approval.id}`, { key: operator.apiKey, body: { decision: "approve" }, headers: { traceparent: `00-${traceId}-${parentId}-01` } });
    expect(res.headers.get("x-request-id")).toBe(traceId);
    expect((await ok200(res)).status).toBe("completed");
    const all = await spansUntil("the decision and the resumed run", (s) => s.filter((x) => x.name === "countersign.run" && attr(x, "countersign.response_id") === env.id).length === 2 && s.some((x) => x.name === "countersign.approval.wait"));
    const request = all.find((s) => s.name === "countersign.http.request" && s.traceId === traceId) as TOtlpSpan;
    expect(request.parentSpanId).toBe(parentId);
    expect(attr(request, "countersign.user_id")).toBe(operator.userId);
    const decision = all.find((s) => s.name === "countersign.decision" && attr(s, "countersign.approval_id") === approval.id) as TOtlpSpan;
    expect(decision.traceId).toBe(traceId);
    expect(decision.parentSpanId).toBe(request.spanId);
    expect(attr(decision, "countersign.decider")).toBe(operator.userId);
    expect(attr(decision, "countersign.channel")).toBe("http");
    expect(attr(decision, "countersign.outcome")).toBe("approved");
    const wait = all.find((s) => s.name === "countersign.approval.wait") as TOtlpSpan;
    expect(wait.parentSpanId).toBe(decision.spanId);
    expect(attr(wait, "countersign.approval_id")).toBe(approval.id);
    expect(BigInt(wait.startTimeUnixNano)).toBeLessThan(BigInt(decision.startTimeUnixNano));
    expect(BigInt(wait.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(run.startTimeUnixNano) - 1_000_000n);
    const resumed = all.find((s) => s.name === "countersign.run" && attr(s, "countersign.response_id") === env.id && s.spanId !== run.spanId) as TOtlpSpan;
    expect(attr(resumed, "countersign.run.resumed")).toBe(true);
    expect(attr(resumed, "countersign.outcome")).toBe("completed");
    expect(resumed.links?.map((l) => l.spanId)).toEqual([decision.spanId]);
    // The resumed run replays the turn and runs the approved tool call under it.
    const resumedTool = all.find((s) => s.name === "countersign.tool_call" && s.traceId === resumed.traceId && attr(s, "countersign.outcome") === "completed");
    expect(resumedTool).toBeDefined();

    // Every span ended exactly once: exported once, with an end time.
    const ids = all.map((s) => s.spanId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const s of all) expect(BigInt(s.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(s.startTimeUnixNano));
    expect(paths.every((p) => p.startsWith("POST /v1/traces application/json"))).toBe(true);
  });

  it("exports nothing when no OTLP endpoint is set (the no-op tracer)", async () => {
    const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    const quiet = await startTestApp();
    let closed = false;
    try {
      const user = await quiet.user("operator");
      const { env, approval } = await invokeApproval(quiet, user.apiKey, "echo untraced");
      await ok200(await quiet.api(`/v1/approvals/${approval.id}`, { key: user.apiKey, body: { decision: "approve" } }));
      expect(quiet.deps.observe.tracing).toBe(false);
      // Closing flushes whatever an exporter still held (tracing.shutdown): after it, nothing more can come.
      await quiet.close();
      closed = true;
      // No span of its run or its requests (the other server, traced, may export its own meanwhile).
      expect(received.filter((x) => JSON.stringify(x).includes(env.id) || JSON.stringify(x).includes(approval.id))).toEqual([]);
    } finally {
      if (!closed) await quiet.close();
      process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    }
  });
});
