import http from "node:http";
import { suspendOne } from "./approvals";
import { type TBare, type TCtx, type TServer, size } from "./lib/env";
import { Client, mapLimit, openSse } from "./lib/http";
import { now, percentile, sleep, type TRow } from "./lib/stats";

/** Per subscriber, the arrival times of the events being timed. */
type TSubscribers = { at: number[][]; close: () => void };

/** Opens `n` SSE streams; `isPublish` marks the timed event, `isReady` the one that says a stream caught up. */
async function subscribe(n: number, url: string, headers: Record<string, string>, isPublish: (b: string) => boolean, isReady: (b: string) => boolean): Promise<TSubscribers> {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const at: number[][] = Array.from({ length: n }, () => []);
  const ready: Array<() => void> = [];
  const caughtUp = Array.from({ length: n }, (_, i) => new Promise<void>((r) => (ready[i] = r)));
  const streams = await mapLimit(Array.from({ length: n }, (_, i) => i), 50, async (i) => {
    const s = openSse(url, headers, agent, (block, t) => {
      if (isReady(block)) ready[i]?.();
      if (isPublish(block)) at[i]?.push(t);
    });
    await s.ready;
    return s;
  });
  await Promise.all(caughtUp);
  await sleep(500);
  const close = () => {
    for (const s of streams) s.close();
    agent.destroy();
  };
  return { at, close };
}

/** Publishes `publishes` times; for each, every subscriber's first timed event after the publish started. */
async function measure(subs: TSubscribers, publishes: number, publish: () => Promise<void>) {
  const last: number[] = [];
  const first: number[] = [];
  const firstAfter = (a: number[], t0: number) => a.find((t) => t >= t0);
  for (let k = 1; k <= publishes; k++) {
    const t0 = now();
    const done = publish();
    while (subs.at.some((a) => firstAfter(a, t0) === undefined) && now() < t0 + 60_000) await sleep(1);
    await done;
    const receipts = subs.at.map((a) => (firstAfter(a, t0) ?? Number.NaN) - t0);
    if (receipts.some(Number.isNaN)) throw new Error(`publish ${k}: ${receipts.filter(Number.isNaN).length} subscribers never received it`);
    last.push(Math.max(...receipts));
    first.push(Math.min(...receipts));
    await sleep(50);
  }
  return { p50: percentile(last, 50), p99: percentile(last, 99), first: percentile(first, 50) };
}

type TSeries = { label: string; path: (id: string, sessionId: string) => string; isPublish: (b: string) => boolean; isReady: (b: string) => boolean };

/** A run with `publishes` exec steps: every approval publishes one `approval.resolved` frame (and one inbox change). */
async function appSeries(server: TServer, n: number, publishes: number, series: TSeries) {
  const client = new Client(server.url, server.key, 1);
  const script = [...Array.from({ length: publishes }, () => ({ toolCalls: [{ name: "exec", arguments: { command: "true" } }] })), { toolCalls: [{ name: "echo", arguments: { text: "done" } }] }];
  const run = await suspendOne(client, { input: { script } });
  const subs = await subscribe(n, `${server.url}${series.path(run.id, run.sessionId)}`, { authorization: `Bearer ${server.key}` }, series.isPublish, series.isReady);
  let approvalId = run.approvalId;
  try {
    return await measure(subs, publishes, async () => {
      const env = await client.json<{ status: string; requiredAction?: { id: string } }>("POST", `/v1/approvals/${approvalId}`, { decision: "approve" });
      if (env.requiredAction) approvalId = env.requiredAction.id;
    });
  } finally {
    subs.close();
    client.close();
  }
}

const trpc = (proc: string, input?: unknown) => `/api/trpc/${proc}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`;

/**
 * Item 5: one event to N subscribers — /v1 SSE streams, console tRPC SSE (responses.onFrames,
 * console.onActivity) — vs a bare SSE server in its own process. "Publish" starts when the
 * approve request (app) or the publish request (bare) is sent; "first" is the earliest receipt.
 */
export async function benchFanout(ctx: TCtx, server: TServer, bare: TBare): Promise<TRow[]> {
  const n = size(ctx, 1000, 50);
  const publishes = size(ctx, 30, 3);
  const db = ctx.kind;
  const payload = { type: "approval.resolved", sequence: 5, responseId: "resp_xxxxxxxxxxxxxxxxxxxxxxxx", approvalId: "approval_xxxxxxxxxxxxxxxxxxxxxxxx", decision: "approve" };

  const bareClient = new Client(bare.url, undefined, 1);
  const bareSubs = await subscribe(n, `${bare.url}/sse`, {}, (b) => b.includes("approval.resolved"), () => true);
  const base = await measure(bareSubs, publishes, async () => void (await bareClient.request("POST", "/publish", payload)));
  bareSubs.close();
  bareClient.close();

  const resolved = (b: string) => b.includes("approval.resolved");
  const series: TSeries[] = [
    { label: "/v1 SSE streams", path: (id, s) => `/v1/responses/${id}/events?sessionId=${s}`, isPublish: resolved, isReady: (b) => b.includes("response.completed") },
    { label: "console tRPC SSE, responses.onFrames", path: (id) => trpc("responses.onFrames", { responseId: id }), isPublish: resolved, isReady: (b) => b.includes("response.completed") },
    { label: "console tRPC SSE, console.onActivity", path: () => trpc("console.onActivity", {}), isPublish: resolved, isReady: (b) => b.includes('"sync"') },
  ];
  const bench = "5 live fan-out";
  const rows: TRow[] = [];
  for (const s of series) {
    const r = await appSeries(server, n, publishes, s);
    const label = `${n} ${s.label}`;
    rows.push({ bench, db, measure: `${label}: publish → last, p50`, value: r.p50, unit: "ms", limit: base.p50, limitLabel: `bare SSE ×${n}`, target: { kind: "maxRatio", x: 2 } });
    rows.push({ bench, db, measure: `${label}: publish → last, p99`, value: r.p99, unit: "ms", limit: base.p99, limitLabel: `bare SSE ×${n}`, target: { kind: "maxRatio", x: 2 } });
    rows.push({ bench, db, measure: `${label}: publish → first, p50`, value: r.first, unit: "ms", limit: base.first, limitLabel: "bare" });
  }
  return rows;
}
