import type { PGlite } from "@electric-sql/pglite";
import pino from "pino";
import { migrateDb, openDb } from "../../db/client";
import { createApp } from "../../server/app";
import { createApiKey } from "../../server/auth/api-keys";
import { addUser } from "../../server/auth/users";
import { freshDatabase, openRaw, rawFromPglite, type TCtx, type TRaw, size } from "./lib/env";
import { Client } from "./lib/http";
import { now, percentile, type TOutcome, type TRow } from "./lib/stats";

/** Bulk seed with INSERT … SELECT generate_series: r responses (2% waiting), one approval each, 10 events each, plus one long trajectory. */
async function seed(raw: TRaw, r: number, long: number): Promise<void> {
  await raw.exec(`
    insert into users (id, name, email, role) select 'user_seed_' || g, 'Seed user ' || g, 'seed' || g || '@bench.local', 'member' from generate_series(1, 100) g;
    insert into agent_sessions (id, user_id, agent, workspace_dir, created_at)
      select 'sess_seed_' || g, 'user_seed_' || (g % 100 + 1), 'scripted', '/tmp/none', now() - make_interval(secs => ${r} - g) from generate_series(1, ${r}) g;
    insert into responses (id, session_id, user_id, agent, status, input, output, approval_ttl_ms, client_tool_ttl_ms, next_seq, next_frame_seq, created_at, completed_at)
      select 'resp_seed_' || g, 'sess_seed_' || g, 'user_seed_' || (g % 100 + 1), 'scripted',
        (case when g % 50 = 0 then 'requires_action' else 'completed' end)::response_status,
        '{"script":[{"toolCalls":[{"name":"exec","arguments":{"command":"ls -la"}}]},{"text":"Done."}]}',
        '[{"type":"tool_call","id":"call_0_0","name":"exec","arguments":{"command":"ls -la"}}]', 900000, 300000, 10, 8,
        now() - make_interval(secs => ${r} - g), case when g % 50 = 0 then null else now() end
      from generate_series(1, ${r}) g;
    insert into approvals (id, response_id, session_id, user_id, call_id, tool_name, action, arguments, cwd, binding_hash, risk, message, status, decided_by, decided_via, decided_at, expires_at, created_at)
      select 'approval_seed_' || g, 'resp_seed_' || g, 'sess_seed_' || g, 'user_seed_' || (g % 100 + 1), 'call_0_0', 'exec', 'tool:exec', '{"command":"ls -la"}', '/tmp/none', md5(g::text), 'medium', 'Run \`ls -la\` in /tmp/none?',
        (case when g % 50 = 0 then 'pending' else 'approved' end)::approval_status, case when g % 50 = 0 then null else 'user_seed_1' end,
        (case when g % 50 = 0 then null else 'http' end)::transport, case when g % 50 = 0 then null else now() end,
        now() + interval '1 day', now() - make_interval(secs => ${r} - g)
      from generate_series(1, ${r}) g;
    insert into response_events (response_id, session_id, seq, frame_seq, type, data, created_at)
      select 'resp_seed_' || (g / 10 + 1), 'sess_seed_' || (g / 10 + 1), g % 10, case when g % 10 in (3, 7) then null else g % 10 end,
        case when g % 10 = 0 then 'response.created' when g % 10 in (3, 7) then 'model.turn' else 'response.tool_call' end,
        jsonb_build_object('id', 'call_' || g, 'name', 'exec', 'arguments', jsonb_build_object('command', 'ls -la /tmp')), now() - make_interval(secs => ${r} - g / 10)
      from generate_series(0, ${r * 10 - 1}) g;
    insert into agent_sessions (id, user_id, agent, workspace_dir) values ('sess_seed_long', 'user_seed_1', 'scripted', '/tmp/none');
    insert into responses (id, session_id, user_id, agent, status, input, approval_ttl_ms, client_tool_ttl_ms, next_seq, next_frame_seq, completed_at)
      values ('resp_seed_long', 'sess_seed_long', 'user_seed_1', 'scripted', 'completed', '{}', 900000, 300000, ${long}, ${long}, now());
    insert into response_events (response_id, session_id, seq, frame_seq, type, data)
      select 'resp_seed_long', 'sess_seed_long', g, g, 'response.tool_call', jsonb_build_object('id', 'call_' || g, 'name', 'exec', 'arguments', jsonb_build_object('command', 'ls -la /tmp')) from generate_series(0, ${long - 1}) g;
    analyze;`);
}

const PLANS: Array<[string, string]> = [
  ["approvals.list pending (operator)", `select a.*, r.agent, u.name from approvals a join responses r on r.id = a.response_id join users u on u.id = a.user_id where a.status = 'pending' order by a.created_at desc limit 200`],
  ["approvals.list decided (operator)", `select a.*, r.agent, u.name from approvals a join responses r on r.id = a.response_id join users u on u.id = a.user_id where a.status in ('approved','denied','expired','cancelled') order by a.created_at desc limit 200`],
  ["responses.list (operator)", `select r.id, r.session_id, r.agent, r.status, u.name, r.created_at from responses r join users u on u.id = r.user_id order by r.created_at desc limit 100`],
  ["responses.list (member)", `select r.id, r.session_id, r.agent, r.status, u.name, r.created_at from responses r join users u on u.id = r.user_id where r.user_id = 'user_seed_1' order by r.created_at desc limit 100`],
  ["responses.get trajectory (10 events)", `select * from response_events where response_id = 'resp_seed_500' order by seq`],
  ["responses.get trajectory (long)", `select * from response_events where response_id = 'resp_seed_long' order by seq`],
];

/** Item 7: console queries over tRPC HTTP on a seeded database; p95 per query and the plans of equivalent SQL. */
export async function benchConsole(ctx: TCtx): Promise<TOutcome> {
  const r = ctx.kind === "postgres" ? size(ctx, 100_000, 5_000) : size(ctx, 10_000, 1_000);
  const long = size(ctx, 10_000, 500);
  const samples = size(ctx, 200, 20);
  const fresh = await freshDatabase(ctx);
  const handle = await openDb({ url: fresh.url, dataDir: fresh.url ? undefined : fresh.pgliteDir, poolSize: 10 });
  await migrateDb(handle);
  const raw = handle.kind === "pglite" ? rawFromPglite((handle.db as unknown as { $client: PGlite }).$client) : await openRaw(fresh, { max: 2 });
  const warnings: string[] = [];
  const app = await createApp({ db: handle, dataDir: fresh.dataDir, log: pino({ level: "warn" }, { write: (l: string) => void warnings.push(l) }) });
  try {
    const seedStart = now();
    await seed(raw, r, long);
    const seedSeconds = (now() - seedStart) / 1000;
    const operator = await addUser(handle.db, app.deps.auth, { name: "Bench Operator", role: "operator" });
    const member = await createApiKey(handle.db, "user_seed_1");
    const q = (proc: string, input?: unknown) => `/api/trpc/${proc}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`;
    const cases: Array<[string, string, string]> = [
      ["approvals.list pending (inbox), operator", q("approvals.list", { status: "pending" }), operator.apiKey],
      ["approvals.list decided, operator", q("approvals.list", { status: "decided" }), operator.apiKey],
      ["responses.list, operator", q("responses.list"), operator.apiKey],
      ["responses.list, member", q("responses.list"), member.apiKey],
      ["responses.get (10-event trajectory)", "", operator.apiKey],
      [`responses.get (${long.toLocaleString("en-US")}-event trajectory)`, q("responses.get", { responseId: "resp_seed_long" }), operator.apiKey],
    ];
    const rows: TRow[] = [];
    const db = ctx.kind;
    for (const [label, path, key] of cases) {
      const client = new Client(app.url, key, 1);
      const at = (i: number) => path || q("responses.get", { responseId: `resp_seed_${((i * 7919) % r) + 1}` });
      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i < samples + 5; i++) {
        const t0 = now();
        const res = await client.request("GET", at(i));
        if (res.status !== 200) throw new Error(`${label} → ${res.status}: ${res.text.slice(0, 200)}`);
        if (i >= 5) times.push(now() - t0);
        bytes = res.text.length;
      }
      client.close();
      rows.push({ bench: "7 console at scale", db, measure: `${label} p95`, value: percentile(times, 95), unit: "ms", target: { kind: "maxValue", x: 50 }, note: `p50 ${percentile(times, 50).toFixed(1)} ms, ${(bytes / 1024).toFixed(0)} KiB` });
    }
    const notes = [`console/${db}: seeded ${r.toLocaleString("en-US")} responses, ${r.toLocaleString("en-US")} approvals (2% pending), ${(r * 10 + long).toLocaleString("en-US")} events in ${seedSeconds.toFixed(1)} s`];
    for (const [label, sql] of PLANS) {
      const plan = await raw.query(`explain (analyze, buffers) ${sql}`);
      notes.push(`plan ${db} — ${label}:\n${plan.map((p) => Object.values(p)[0]).join("\n")}`);
    }
    return { rows, notes, problems: warnings.map((l) => `console/${db}: ${l.trim().slice(0, 300)}`) };
  } finally {
    await app.close();
    if (handle.kind === "postgres") await raw.close();
    await handle.close();
    await fresh.drop();
  }
}
