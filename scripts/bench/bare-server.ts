/**
 * The bare baselines, as their own process (like the real server): a node:http endpoint doing
 * the same primary-key select as the recovery poll, a bare SSE broadcaster, and the raw
 * decide / suspend limits (run here, in a process of their own, through the same driver).
 * Env: BARE_PORT, and BARE_DB_URL (PostgreSQL, postgres.js) or BARE_PGLITE_DIR (PGlite).
 */
import { createServer, type ServerResponse } from "node:http";
import { openRaw } from "./lib/env";
import { prepareScratch, rawDecide, rawDecideAfterIdle, rawSuspend } from "./lib/raw";

const port = Number(process.env.BARE_PORT);
const raw = await openRaw(
  process.env.BARE_DB_URL ? { kind: "postgres", url: process.env.BARE_DB_URL } : { kind: "pglite" },
  { max: 16, dir: process.env.BARE_PGLITE_DIR },
);
await raw.exec(`create table if not exists bare_responses (id text primary key, session_id text not null, status text not null, input jsonb not null, output jsonb not null, envelope jsonb, created_at timestamptz not null default now())`);

const streams = new Set<ServerResponse>();
let published = 0;

const readBody = (req: import("node:http").IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    let s = "";
    req.on("data", (c: Buffer) => (s += c.toString()));
    req.on("end", () => resolve(s));
  });

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost");
  try {
    if (url.pathname === "/poll") {
      const [row] = await raw.query("select * from bare_responses where id = $1", [url.searchParams.get("id")]);
      if (!row) return void res.writeHead(404).end();
      const body = JSON.stringify(row.envelope);
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
      return;
    }
    if (url.pathname === "/seed" && req.method === "POST") {
      const { n, envelope, input } = JSON.parse(await readBody(req)) as { n: number; envelope: { output: unknown }; input: unknown };
      await raw.query(
        `insert into bare_responses (id, session_id, status, input, output, envelope) select 'bare_' || g, 'sess_bare', 'completed', $2, $3, $4 from generate_series(1, $1::int) g on conflict do nothing`,
        [n, JSON.stringify(input), JSON.stringify(envelope.output), JSON.stringify(envelope)],
      );
      return void res.writeHead(204).end();
    }
    if (url.pathname === "/raw-limits" && req.method === "POST") {
      const o = JSON.parse(await readBody(req)) as { single: number; concurrent: number; concurrency: number; idle: { n: number; ms: number } };
      await prepareScratch(raw);
      const decide = await rawDecide(raw, o);
      const suspend = await rawSuspend(raw, o.single);
      // PGlite: the same decide with its statements prepared, as the app's run (shown beside the limit, not the limit).
      const prepared = raw.withPreparedStatements ? await rawDecide(raw.withPreparedStatements(), o) : null;
      // The same decide, each after an idle wait (shown beside the round trip, not the limit).
      const afterIdle = await rawDecideAfterIdle(raw, o.idle.n, o.idle.ms);
      const body = JSON.stringify({ decide, suspend, decidePrepared: prepared, decideAfterIdle: afterIdle });
      res.writeHead(200, { "content-type": "application/json" }).end(body);
      return;
    }
    if (url.pathname === "/sse") {
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", connection: "keep-alive" });
      res.write(": ok\n\n");
      streams.add(res);
      res.on("close", () => streams.delete(res));
      return;
    }
    if (url.pathname === "/publish" && req.method === "POST") {
      const payload = await readBody(req);
      const seq = ++published;
      const event = `id: ${seq}\nevent: approval.resolved\ndata: ${payload}\n\n`;
      const t0 = performance.now();
      for (const s of streams) s.write(event);
      const body = JSON.stringify({ clients: streams.size, writeLoopMs: performance.now() - t0 });
      res.writeHead(200, { "content-type": "application/json" }).end(body);
      return;
    }
    res.writeHead(404).end();
  } catch (error) {
    console.error(error);
    res.writeHead(500).end(String(error));
  }
});
server.listen(port, "127.0.0.1", () => console.log("bare ready"));
const stop = async () => {
  for (const s of streams) s.destroy();
  server.close();
  await raw.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
