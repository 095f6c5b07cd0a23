import { createApiKey } from "../../server/auth/api-keys";
import { addUser } from "../../server/auth/users";
import { appOnFreshDatabase } from "./lib/capture";
import { size, type TCtx, type TRaw } from "./lib/env";
import { Client } from "./lib/http";
import { now, percentile, type TOutcome, type TRow } from "./lib/stats";

/**
 * Item 8: decision analytics (docs/analytics.md) over N recorded approvals and N/2 gate passes
 * spread over a year (an installation's history; the page shows the last 30 days by default). Each
 * chart is one tRPC call, as the console asks for it; every figure at once and the policy
 * simulation follow. The limit is the raw work: the same statements the app sent, run back to back
 * through the bare driver (no HTTP, auth or ORM).
 */

const DAYS = 365;

/** 100 users, 10 deciders, 5 agents, 20 actions, 1,000 distinct arguments; outcomes in realistic shares. */
export async function seed(raw: TRaw, n: number): Promise<void> {
  const passes = Math.floor(n / 2);
  await raw.exec(`
    insert into users (id, name, email, role) select 'user_seed_' || g, 'Seed user ' || g, 'seed' || g || '@bench.local', (case when g <= 10 then 'operator' else 'member' end)::role from generate_series(1, 100) g;
    insert into agent_sessions (id, user_id, agent, workspace_dir) select 'sess_seed_' || g, 'user_seed_' || g, 'agent' || (g % 5), '/tmp/none' from generate_series(1, 100) g;
    insert into responses (id, session_id, user_id, agent, status, input, approval_ttl_ms, client_tool_ttl_ms, next_seq, next_frame_seq, completed_at)
      select 'resp_seed_' || g, 'sess_seed_' || g, 'user_seed_' || g, 'agent' || (g % 5), 'completed', '{}', 900000, 300000, 0, 0, now() from generate_series(1, 100) g;
    insert into approvals (id, response_id, session_id, user_id, agent, call_id, tool_name, action, arguments, original_arguments, reply_message, cwd, binding_hash, risk, message,
                           status, decided_by, decided_via, decided_at, expires_at, created_at)
      select 'approval_seed_' || g, 'resp_seed_' || (g % 100 + 1), 'sess_seed_' || (g % 100 + 1), 'user_seed_' || (g % 100 + 1), 'agent' || ((g % 100 + 1) % 5),
        'call_' || g, 'exec', 'tool:action' || (g % 20), jsonb_build_object('command', 'run task ' || (g % 1000)),
        case when g % 100 < 5 then jsonb_build_object('command', 'run task ' || (g % 1000) || ' --safe') end,
        case when g % 100 between 80 and 82 then 'use staging' end,
        '/tmp/none', md5(g::text), 'medium', 'Run a task?',
        (case when g % 100 = 99 then 'pending' when g % 100 < 75 then 'approved' when g % 100 < 90 then 'denied' when g % 100 < 96 then 'expired' else 'cancelled' end)::approval_status,
        case when g % 100 < 90 then 'user_seed_' || (g % 10 + 1) end,
        (case when g % 100 = 99 then null when g % 100 < 90 then 'console' else 'system' end)::transport,
        case when g % 100 <> 99 then now() - make_interval(secs => (g::float8 / ${n}) * ${DAYS * 86_400}) + make_interval(secs => 5 + (g % 997) * 7) end,
        now() + interval '1 day', now() - make_interval(secs => (g::float8 / ${n}) * ${DAYS * 86_400})
      from generate_series(1, ${n}) g;
    insert into gate_passes (id, response_id, session_id, user_id, agent, call_id, tool_name, action, arguments, risk, settled_by, decision, created_at)
      select 'gate_seed_' || g, 'resp_seed_' || (g % 100 + 1), 'sess_seed_' || (g % 100 + 1), 'user_seed_' || (g % 100 + 1), 'agent' || ((g % 100 + 1) % 5),
        'call_' || g, 'exec', 'tool:action' || (g % 20), jsonb_build_object('command', 'run task ' || (g % 1000)), 'low',
        (case when g % 10 < 7 then 'policy' when g % 10 < 9 then 'grant' else 'reviewer' end)::settled_by, 'approve',
        now() - make_interval(secs => (g::float8 / ${passes}) * ${DAYS * 86_400})
      from generate_series(1, ${passes}) g;`);
  // Outside the seed's implicit transaction: the visibility map lets the figures read the indexes alone.
  await raw.exec("vacuum analyze approvals");
  await raw.exec("vacuum analyze gate_passes");
}

/** `target`: the limit applies (one chart over the page's default period); the rest are shown for what they cost. */
type TCase = { label: string; proc: string; input: () => unknown; member?: boolean; target?: boolean };

function cases(): TCase[] {
  const to = new Date();
  const days = (d: number) => ({ from: new Date(to.getTime() - d * 86_400_000).toISOString(), to: to.toISOString(), timeZone: "Europe/Berlin" });
  return [
    // One chart each, as the console asks for them: the limit is per chart.
    { label: "chart: totals and requests per day (analytics.outcomes), the last 30 days", proc: "analytics.outcomes", input: () => days(30), target: true },
    { label: "chart: time to decide (analytics.times), the last 30 days", proc: "analytics.times", input: () => days(30), target: true },
    { label: "chart: repeated requests (analytics.repeated), the last 30 days", proc: "analytics.repeated", input: () => days(30), target: true },
    { label: "chart: expiries (analytics.expired), the last 30 days", proc: "analytics.expired", input: () => days(30), target: true },
    { label: "chart: the requests behind a figure (analytics.requests), first page", proc: "analytics.requests", input: () => days(30), target: true },
    { label: "chart: requests per day, one agent", proc: "analytics.outcomes", input: () => ({ ...days(30), agent: "agent1" }), target: true },
    { label: "chart: time to decide, one approver", proc: "analytics.times", input: () => ({ ...days(30), approver: "user_seed_3" }), target: true },
    { label: "chart: requests per day, as a member (own only)", proc: "analytics.outcomes", input: () => days(30), member: true, target: true },
    { label: "chart: repeated requests, as a member (own only)", proc: "analytics.repeated", input: () => days(30), member: true, target: true },
    // Every figure in one call (GET /v1/analytics/decisions): the charts at once on two cores.
    { label: "every figure at once (analytics.decisions), the last 30 days", proc: "analytics.decisions", input: () => days(30) },
    { label: "every figure at once, 365 days: every recorded approval", proc: "analytics.decisions", input: () => days(365) },
  ];
}


export async function benchAnalytics(ctx: TCtx): Promise<TOutcome> {
  const n = ctx.kind === "postgres" ? size(ctx, 1_000_000, 20_000) : size(ctx, 100_000, 5_000);
  const samples = size(ctx, 100, 10);
  const { handle, raw, capture, app, warnings, close } = await appOnFreshDatabase(ctx);
  const db = ctx.kind;
  const problems: string[] = [];
  try {
    const seedStart = now();
    await seed(raw, n);
    const notes = [`analytics/${db}: seeded ${n.toLocaleString("en-US")} approvals and ${Math.floor(n / 2).toLocaleString("en-US")} gate passes over ${DAYS} days in ${((now() - seedStart) / 1000).toFixed(1)} s`];
    const operator = await addUser(handle.db, app.deps.auth, { name: "Bench Operator", role: "operator" });
    const member = await createApiKey(handle.db, "user_seed_7");
    const rows: TRow[] = [];
    for (const c of cases()) {
      const client = new Client(app.url, c.member ? member.apiKey : operator.apiKey, 1);
      try {
        const path = `/api/trpc/${c.proc}?input=${encodeURIComponent(JSON.stringify(c.input()))}`;
        const times: number[] = [];
        // The untargeted rows take up to seconds each: fewer samples (their p95 is then close to their maximum).
        const n = c.target ? samples : Math.min(samples, 10);
        for (let i = 0; i < n + 3; i++) {
          capture.state.on = i === 0;
          const t0 = now();
          const res = await client.request("GET", path);
          capture.state.on = false;
          if (res.status !== 200) throw new Error(`${res.status}: ${res.text.slice(0, 300)}`);
          if (i >= 3) times.push(now() - t0);
        }
        // The limit: the same statements, back to back through the bare driver.
        const queries = capture.state.queries.splice(0);
        const rawTimes: number[] = [];
        for (let i = 0; i < n; i++) {
          const t0 = now();
          for (const q of queries) await raw.query(q.sql, q.params);
          rawTimes.push(now() - t0);
        }
        rows.push({
          bench: "8 decision analytics",
          db,
          measure: `${c.label} p95`,
          value: percentile(times, 95),
          unit: "ms",
          limit: percentile(rawTimes, 95),
          limitLabel: `its ${queries.length} statements, raw, back to back, p95`,
          ...(db === "postgres" && c.target ? { target: { kind: "maxValue" as const, x: 200 } } : {}),
          note: `p50 ${percentile(times, 50).toFixed(1)} ms`,
        });
        for (const q of queries) {
          const plan = await raw.query(`explain (analyze, buffers) ${q.sql}`, q.params).catch((e: unknown) => [{ error: String(e) }]);
          notes.push(`plan ${db} — ${c.label}:\n${q.sql}\n${plan.map((p) => Object.values(p)[0]).join("\n")}`);
        }
      } catch (error) {
        capture.state.queries.length = 0;
        problems.push(`analytics/${db}: ${c.label} failed: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        client.close();
      }
    }
    // Policy simulation: a candidate that lets every exec through, over a window holding at least 100,000 requests.
    const perDay = (n * 1.5) / DAYS;
    const simDays = Math.min(DAYS, Math.ceil(size(ctx, 100_000, 2_000) / perDay));
    const candidate = { builtins: false, agents: [0, 1, 2, 3, 4].map((i) => ({ name: `agent${i}`, harness: "scripted", tools: { exec: { approval: "never" } } })) };
    const client = new Client(app.url, operator.apiKey, 1);
    try {
      const times: number[] = [];
      let replayed = 0;
      for (let i = 0; i < size(ctx, 3, 1); i++) {
        const t0 = now();
        const res = await client.request("POST", "/api/trpc/policy.simulate", { file: candidate, days: simDays });
        if (res.status !== 200) throw new Error(`${res.status}: ${res.text.slice(0, 300)}`);
        times.push(now() - t0);
        replayed = (JSON.parse(res.text) as { result: { data: { requests: number } } }).result.data.requests;
      }
      rows.push({
        bench: "8 decision analytics",
        db,
        measure: `policy simulation (policy.simulate) of ${replayed.toLocaleString("en-US")} recorded requests (${simDays} days), the slowest of ${times.length}`,
        value: Math.max(...times),
        unit: "ms",
        target: { kind: "maxValue", x: 10_000 },
      });
    } catch (error) {
      problems.push(`analytics/${db}: policy simulation failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      client.close();
    }
    return { rows, notes, problems: [...problems, ...warnings.map((l) => `analytics/${db}: ${l.trim().slice(0, 300)}`)] };
  } finally {
    await close();
  }
}
