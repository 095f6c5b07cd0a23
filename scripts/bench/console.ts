import { createApiKey } from "../../server/auth/api-keys";
import { addUser } from "../../server/auth/users";
import { appOnFreshDatabase } from "./lib/capture";
import { size, type TCtx, type TRaw } from "./lib/env";
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
    insert into approvals (id, response_id, session_id, user_id, agent, call_id, tool_name, action, arguments, cwd, binding_hash, risk, message, status, decided_by, decided_via, decided_at, expires_at, created_at)
      select 'approval_seed_' || g, 'resp_seed_' || g, 'sess_seed_' || g, 'user_seed_' || (g % 100 + 1), 'scripted', 'call_0_0', 'exec', 'tool:exec', '{"command":"ls -la"}', '/tmp/none', md5(g::text), 'medium', 'Run \`ls -la\` in /tmp/none?',
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

type TCase = { label: string; proc: string; input?: (i: number) => unknown; member?: boolean };

/** The procedures the console calls: the original lists and the keyset-paginated ones. */
function cases(r: number, long: number): TCase[] {
  const random = (i: number) => `resp_seed_${((i * 7919) % r) + 1}`;
  return [
    { label: "approvals.list pending (inbox)", proc: "approvals.list", input: () => ({ status: "pending" }) },
    { label: "approvals.list decided", proc: "approvals.list", input: () => ({ status: "decided" }) },
    { label: "inbox.list pending, keyset page", proc: "inbox.list", input: () => ({ status: "pending" }) },
    { label: "inbox.list decided, keyset page", proc: "inbox.list", input: () => ({ status: "decided" }) },
    { label: "responses.list (all users)", proc: "responses.list" },
    { label: "responses.list as a member (own only)", proc: "responses.list", member: true },
    { label: "audit.responses, keyset page", proc: "audit.responses", input: () => ({}) },
    { label: "responses.get (10-event trajectory)", proc: "responses.get", input: (i) => ({ responseId: random(i) }) },
    { label: `responses.get (${long.toLocaleString("en-US")}-event trajectory)`, proc: "responses.get", input: () => ({ responseId: "resp_seed_long" }) },
    { label: `audit.trajectory first page (${long.toLocaleString("en-US")} events)`, proc: "audit.trajectory", input: () => ({ responseId: "resp_seed_long" }) },
    { label: "audit.trajectory middle page", proc: "audit.trajectory", input: () => ({ responseId: "resp_seed_long", cursor: Math.floor(long / 2) }) },
  ];
}


/** Item 7: console queries over tRPC HTTP on a seeded database; p95 per query and the plans of the SQL each one sent. */
export async function benchConsole(ctx: TCtx): Promise<TOutcome> {
  const r = ctx.kind === "postgres" ? size(ctx, 100_000, 5_000) : size(ctx, 10_000, 1_000);
  const long = size(ctx, 10_000, 500);
  const samples = size(ctx, 200, 20);
  const { handle, raw, capture, app, warnings, close } = await appOnFreshDatabase(ctx);
  const db = ctx.kind;
  const problems: string[] = [];
  try {
    const seedStart = now();
    await seed(raw, r, long);
    const seedSeconds = (now() - seedStart) / 1000;
    const operator = await addUser(handle.db, app.deps.auth, { name: "Bench Operator", role: "operator" });
    const member = await createApiKey(handle.db, "user_seed_1");
    const path = (c: TCase, i: number) => `/api/trpc/${c.proc}${c.input ? `?input=${encodeURIComponent(JSON.stringify(c.input(i)))}` : ""}`;
    const rows: TRow[] = [];
    const notes = [`console/${db}: seeded ${r.toLocaleString("en-US")} responses, ${r.toLocaleString("en-US")} approvals (2% pending), ${(r * 10 + long).toLocaleString("en-US")} events in ${seedSeconds.toFixed(1)} s`];
    for (const c of cases(r, long)) {
      const client = new Client(app.url, c.member ? member.apiKey : operator.apiKey, 1);
      try {
        const times: number[] = [];
        let bytes = 0;
        for (let i = 0; i < samples + 5; i++) {
          capture.state.on = i === 0;
          const t0 = now();
          const res = await client.request("GET", path(c, i));
          capture.state.on = false;
          if (res.status !== 200) throw new Error(`${res.status}: ${res.text.slice(0, 200)}`);
          if (i >= 5) times.push(now() - t0);
          bytes = res.text.length;
        }
        rows.push({ bench: "7 console at scale", db, measure: `${c.label} p95`, value: percentile(times, 95), unit: "ms", target: { kind: "maxValue", x: 50 }, note: `p50 ${percentile(times, 50).toFixed(1)} ms, ${(bytes / 1024).toFixed(0)} KiB` });
        for (const q of capture.state.queries.splice(0)) {
          const plan = await raw.query(`explain (analyze, buffers) ${q.sql}`, q.params).catch((e: unknown) => [{ error: String(e) }]);
          notes.push(`plan ${db} — ${c.label}:\n${q.sql}\n${plan.map((p) => Object.values(p)[0]).join("\n")}`);
        }
      } catch (error) {
        capture.state.queries.length = 0;
        problems.push(`console/${db}: ${c.label} failed: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        client.close();
      }
    }
    return { rows, notes, problems: [...problems, ...warnings.map((l) => `console/${db}: ${l.trim().slice(0, 300)}`)] };
  } finally {
    await close();
  }
}
