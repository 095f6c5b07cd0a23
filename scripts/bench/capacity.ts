import { approveOne, suspendOne } from "./approvals";
import { freshDatabase, serverProblems, startServer, type TCtx, size } from "./lib/env";
import { Client, runLoad } from "./lib/http";
import { now, percentile, sleep, type TOutcome, type TRow } from "./lib/stats";

/** Approve round trips on one client, each on a freshly suspended run (only the approve is timed). */
async function decideLatencies(client: Client, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = await suspendOne(client);
    const t0 = now();
    await approveOne(client, s.approvalId);
    out.push(now() - t0);
  }
  return out;
}

/** VmRSS in kB: the median of 5 readings 500 ms apart (RSS moves with GC and allocator returns). */
async function settledRss(ctx: TCtx, read: () => number): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < size(ctx, 5, 2); i++) {
    await sleep(size(ctx, 500, 100));
    xs.push(read());
  }
  return percentile(xs, 50);
}

/**
 * Item 3: suspended capacity. A fresh server process; decide p99 with 10 runs waiting, then
 * `waiting` runs suspended at once (VmRSS of the server before/after), then decide p99 again.
 */
export async function benchCapacity(ctx: TCtx): Promise<TOutcome> {
  const waiting = size(ctx, 10_000, 100);
  const samples = size(ctx, 300, 10);
  const fresh = await freshDatabase(ctx);
  const server = await startServer(fresh);
  try {
    const one = new Client(server.url, server.key, 1);
    const many = new Client(server.url, server.key, 16);
    await decideLatencies(one, size(ctx, 50, 3));
    for (let i = 0; i < 10; i++) await suspendOne(one);
    const before = await decideLatencies(one, samples);
    const rssBefore = await settledRss(ctx, server.rssKb);

    const started = now();
    const created = await runLoad({ concurrency: 16, total: waiting, task: async () => void (await suspendOne(many)) });
    const fillSeconds = (now() - started) / 1000;
    const rssAfter = await settledRss(ctx, server.rssKb);
    const after = await decideLatencies(one, samples);
    const rssEnd = server.rssKb();
    one.close();
    many.close();

    const perRunKb = ((rssAfter - rssBefore) * 1024) / created.count / 1000;
    const db = ctx.kind;
    const bench = "3 suspended capacity";
    const rows: TRow[] = [
      { bench, db, measure: `RSS per suspended run (${created.count.toLocaleString("en-US")} waiting)`, value: perRunKb, unit: "KB", target: { kind: "maxValue", x: 20 }, note: `server VmRSS ${Math.round(rssBefore / 1024)} → ${Math.round(rssAfter / 1024)} MB (${Math.round(rssEnd / 1024)} MB after the second decide series)` },
      { bench, db, measure: "server VmRSS with them waiting", value: rssAfter / 1024, unit: "MB", limit: rssBefore / 1024, limitLabel: "VmRSS with 10 waiting" },
      { bench, db, measure: `decide round trip p99, ${created.count.toLocaleString("en-US")} waiting`, value: percentile(after, 99), unit: "ms", limit: percentile(before, 99), limitLabel: "p99 with 10 waiting", target: { kind: "maxRatio", x: 2 } },
      { bench, db, measure: `decide round trip p50, ${created.count.toLocaleString("en-US")} waiting`, value: percentile(after, 50), unit: "ms", limit: percentile(before, 50), limitLabel: "p50 with 10 waiting" },
      { bench, db, measure: "suspend throughput while filling, 16 clients", value: created.count / fillSeconds, unit: "/s" },
    ];
    return { rows, problems: serverProblems(server.proc.output()) };
  } finally {
    await server.stop();
    await fresh.drop();
  }
}
