import type { TSuspended } from "./approvals";
import { APPROVAL_SCRIPT } from "./approvals";
import { type TBare, type TCtx, type TServer, size } from "./lib/env";
import { Client, runLoad } from "./lib/http";
import { percentile, type TRow } from "./lib/stats";

/**
 * Item 6: recovery poll. GET /v1/responses/{id}?sessionId= on completed responses, 10
 * keep-alive connections, vs the bare node:http endpoint doing the same primary-key select.
 * App and bare alternate twice; each side reports the mean of its two windows.
 */
export async function benchPoll(ctx: TCtx, server: TServer, bare: TBare, completed: readonly TSuspended[]): Promise<TRow[]> {
  if (completed.length === 0) throw new Error("poll needs completed responses");
  const app = new Client(server.url, server.key, 10);
  const base = new Client(bare.url, undefined, 10);
  const first = completed[0] as TSuspended;
  const envelope = await app.json("GET", `/v1/responses/${first.id}?sessionId=${first.sessionId}`);
  await base.request("POST", "/seed", { n: completed.length, envelope, input: APPROVAL_SCRIPT.input });

  const durationMs = size(ctx, 6000, 400);
  const appTask = async (i: number) => {
    const r = completed[i % completed.length] as TSuspended;
    const res = await app.request("GET", `/v1/responses/${r.id}?sessionId=${r.sessionId}`);
    if (res.status !== 200) throw new Error(`poll → ${res.status}`);
  };
  const bareTask = async (i: number) => {
    const res = await base.request("GET", `/poll?id=bare_${(i % completed.length) + 1}`);
    if (res.status !== 200) throw new Error(`bare poll → ${res.status}`);
  };
  await runLoad({ concurrency: 10, durationMs: size(ctx, 500, 100), task: appTask });
  await runLoad({ concurrency: 10, durationMs: size(ctx, 500, 100), task: bareTask });
  const appRuns = [];
  const bareRuns = [];
  for (let round = 0; round < 2; round++) {
    appRuns.push(await runLoad({ concurrency: 10, durationMs, task: appTask }));
    bareRuns.push(await runLoad({ concurrency: 10, durationMs, task: bareTask }));
  }
  app.close();
  base.close();
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const appLat = appRuns.flatMap((r) => r.latencies);
  const bareLat = bareRuns.flatMap((r) => r.latencies);
  const bench = "6 recovery poll";
  return [
    {
      bench,
      db: ctx.kind,
      measure: "GET /v1/responses/{id}, 10 connections",
      value: mean(appRuns.map((r) => r.perSecond)),
      unit: "/s",
      limit: mean(bareRuns.map((r) => r.perSecond)),
      limitLabel: "bare node:http + PK select",
      target: { kind: "minRatio", x: 0.5 },
    },
    { bench, db: ctx.kind, measure: "p99 at 10 connections", value: percentile(appLat, 99), unit: "ms", limit: percentile(bareLat, 99), limitLabel: "bare p99" },
  ];
}
