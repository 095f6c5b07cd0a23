/**
 * The post-run audit of a Countersign database (PostgreSQL or PGlite), read-only:
 * - every decision consumed exactly once: each decided approval has exactly one
 *   `approval.resolved` event (with its decision), undecided ones none, no approval decided twice;
 *   each settled run question exactly one `question.resolved` event;
 * - every run terminal (with its stored envelope and exactly one terminal frame, the last one) or
 *   legitimately waiting (requires_action on exactly one pending action, or in_progress under a
 *   live lease); nothing pending under a terminal run, no step left running in a terminal run;
 * - every trajectory gap-free: `seq` and `frame_seq` contiguous from 0 per response, matching
 *   the response's `next_seq` / `next_frame_seq` counters.
 * Used by `npm run load` and by the fault tests.
 */

export type TQuery = (text: string) => Promise<Record<string, unknown>[]>;

export type TAuditCheck = { name: string; ok: boolean; checked: number; failures: string[] };

export type TAuditReport = {
  ok: boolean;
  counts: {
    responses: Record<string, number>;
    approvals: Record<string, number>;
    questions: Record<string, number>;
    events: number;
    frames: number;
  };
  checks: TAuditCheck[];
};

const MAX_FAILURES = 20;

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

function check(name: string, rows: Record<string, unknown>[], checked: number, describe: (r: Record<string, unknown>) => string): TAuditCheck {
  return { name, ok: rows.length === 0, checked, failures: rows.slice(0, MAX_FAILURES).map(describe).concat(rows.length > MAX_FAILURES ? [`… and ${rows.length - MAX_FAILURES} more`] : []) };
}

async function tally(query: TQuery, table: string): Promise<Record<string, number>> {
  const rows = await query(`select status::text as status, count(*) as n from ${table} group by status order by status`);
  return Object.fromEntries(rows.map((r) => [String(r.status), num(r.n)]));
}

/** Runs every check (read-only). */
export async function auditDatabase(query: TQuery): Promise<TAuditReport> {
  const counts = {
    responses: await tally(query, "responses"),
    approvals: await tally(query, "approvals"),
    questions: await tally(query, "questions"),
    events: num((await query("select count(*) as n from response_events"))[0]?.n),
    frames: num((await query("select count(frame_seq) as n from response_events"))[0]?.n),
  };
  const totalResponses = Object.values(counts.responses).reduce((a, b) => a + b, 0);
  const totalApprovals = Object.values(counts.approvals).reduce((a, b) => a + b, 0);
  const checks: TAuditCheck[] = [];

  // 1. Decisions consumed exactly once.
  checks.push(
    check(
      "each decided approval has exactly one approval.resolved event with its decision; undecided ones have none",
      await query(`
        select a.id, a.status::text as status, count(e.id) as events,
               count(e.id) filter (where e.data->>'decision' = case a.status when 'approved' then 'approve' when 'denied' then 'deny' end) as matching
        from approvals a
        left join response_events e on e.response_id = a.response_id and e.type = 'approval.resolved' and e.data->>'approvalId' = a.id
        group by a.id, a.status
        having (a.status in ('approved','denied') and (count(e.id) <> 1 or count(e.id) filter (where e.data->>'decision' = case a.status when 'approved' then 'approve' when 'denied' then 'deny' end) <> 1))
            or (a.status not in ('approved','denied') and count(e.id) <> 0)`),
      totalApprovals,
      (r) => `approval ${r.id} (${r.status}) has ${r.events} approval.resolved event(s), ${r.matching} with its decision`,
    ),
  );
  checks.push(
    check(
      "no approval decided twice (approval.resolved events per approval id ≤ 1) and none for an unknown approval",
      await query(`
        select e.data->>'approvalId' as id, count(*) as n, count(a.id) as known
        from response_events e left join approvals a on a.id = e.data->>'approvalId'
        where e.type = 'approval.resolved'
        group by e.data->>'approvalId'
        having count(*) > 1 or count(a.id) = 0`),
      num((await query("select count(*) as n from response_events where type = 'approval.resolved'"))[0]?.n),
      (r) => `approval ${r.id}: ${r.n} approval.resolved events${num(r.known) === 0 ? " (no such approval)" : ""}`,
    ),
  );
  checks.push(
    check(
      "decided approvals record who, how and when",
      await query(`select id, status::text as status from approvals where status in ('approved','denied') and (decided_by is null or decided_at is null or decided_via is null)`),
      totalApprovals,
      (r) => `approval ${r.id} (${r.status}) lacks decided_by/decided_at/decided_via`,
    ),
  );
  checks.push(
    check(
      "each settled run question has exactly one question.resolved event; pending ones none",
      await query(`
        select q.id, q.status::text as status, count(e.id) as events
        from questions q
        left join response_events e on e.response_id = q.response_id and e.type = 'question.resolved' and e.data->'question'->>'id' = q.id
        where q.response_id is not null and q.kind <> 'gateway'
        group by q.id, q.status
        having (q.status in ('answered','cancelled') and count(e.id) <> 1) or (q.status = 'pending' and count(e.id) <> 0)`),
      num((await query("select count(*) as n from questions where response_id is not null and kind <> 'gateway'"))[0]?.n),
      (r) => `question ${r.id} (${r.status}) has ${r.events} question.resolved event(s)`,
    ),
  );

  // 2. Runs terminal or legitimately waiting.
  checks.push(
    check(
      "every run is terminal, waiting on exactly one pending action, or executing under a live lease",
      await query(`
        select r.id, r.status::text as status, r.lease_owner, r.lease_expires_at > now() as live,
          (select count(*) from approvals a where a.response_id = r.id and a.status = 'pending')
          + (select count(*) from client_tool_requests c where c.response_id = r.id and c.status = 'pending')
          + (select count(*) from questions q where q.response_id = r.id and q.status = 'pending' and q.kind <> 'gateway') as pending
        from responses r
        where r.status in ('in_progress','requires_action')`).then((rows) =>
        rows.filter((r) => (r.status === "requires_action" ? num(r.pending) !== 1 : !(r.lease_owner && r.live === true))),
      ),
      totalResponses,
      (r) => (r.status === "requires_action" ? `response ${r.id} requires_action with ${r.pending} pending actions` : `response ${r.id} stuck in_progress without a live lease (owner ${r.lease_owner ?? "none"})`),
    ),
  );
  checks.push(
    check(
      "terminal runs store their envelope and end with exactly one terminal response.completed frame",
      await query(`
        select r.id, r.status::text as status, r.envelope is not null as has_envelope, r.envelope->>'status' as envelope_status,
          (select count(*) from response_events e where e.response_id = r.id and e.type = 'response.completed' and e.data->>'status' <> 'requires_action') as terminal_frames,
          (select e.type from response_events e where e.response_id = r.id and e.frame_seq is not null order by e.frame_seq desc limit 1) as last_frame
        from responses r
        where r.status in ('completed','denied','cancelled','failed')`).then((rows) =>
        rows.filter((r) => r.has_envelope !== true || r.envelope_status !== r.status || num(r.terminal_frames) !== 1 || r.last_frame !== "response.completed"),
      ),
      totalResponses,
      (r) => `response ${r.id} (${r.status}): envelope ${r.has_envelope ? r.envelope_status : "missing"}, ${r.terminal_frames} terminal frame(s), last frame ${r.last_frame}`,
    ),
  );
  checks.push(
    check(
      "nothing is left pending or running under a terminal run (no half-applied state)",
      await query(`
        select r.id, r.status::text as status,
          (select count(*) from approvals a where a.response_id = r.id and a.status = 'pending') as approvals,
          (select count(*) from client_tool_requests c where c.response_id = r.id and c.status = 'pending') as client_tools,
          (select count(*) from questions q where q.response_id = r.id and q.status = 'pending' and q.kind <> 'gateway') as questions,
          (select count(*) from response_steps s where s.response_id = r.id and s.status = 'running') as running_steps
        from responses r
        where r.status in ('completed','denied','cancelled','failed')`).then((rows) =>
        rows.filter((r) => num(r.approvals) + num(r.client_tools) + num(r.questions) + num(r.running_steps) > 0),
      ),
      totalResponses,
      (r) => `response ${r.id} (${r.status}) still has ${r.approvals} pending approvals, ${r.client_tools} client tools, ${r.questions} questions, ${r.running_steps} running steps`,
    ),
  );

  // 3. Gap-free trajectories.
  checks.push(
    check(
      "seq and frame_seq are contiguous from 0 per response and match next_seq / next_frame_seq",
      await query(`
        select r.id, r.next_seq, r.next_frame_seq,
          count(e.id) as n, min(e.seq) as min_seq, max(e.seq) as max_seq, count(distinct e.seq) as distinct_seq,
          count(e.frame_seq) as f, min(e.frame_seq) as min_frame, max(e.frame_seq) as max_frame, count(distinct e.frame_seq) as distinct_frame
        from responses r left join response_events e on e.response_id = r.id
        group by r.id, r.next_seq, r.next_frame_seq`).then((rows) =>
        rows.filter((r) => {
          const n = num(r.n);
          const f = num(r.f);
          const seqOk = n > 0 && num(r.min_seq) === 0 && num(r.max_seq) === n - 1 && num(r.distinct_seq) === n && num(r.next_seq) === n;
          const frameOk = f === 0 ? num(r.next_frame_seq) === 0 : num(r.min_frame) === 0 && num(r.max_frame) === f - 1 && num(r.distinct_frame) === f && num(r.next_frame_seq) === f;
          return !(seqOk && frameOk);
        }),
      ),
      totalResponses,
      (r) => `response ${r.id}: ${r.n} events seq ${r.min_seq}..${r.max_seq} (next ${r.next_seq}), ${r.f} frames ${r.min_frame}..${r.max_frame} (next ${r.next_frame_seq})`,
    ),
  );
  return { ok: checks.every((c) => c.ok), counts, checks };
}

/** The report as text lines. */
export function formatAudit(report: TAuditReport): string[] {
  const fmt = (o: Record<string, number>) => Object.entries(o).map(([k, v]) => `${k} ${v}`).join(", ") || "none";
  const lines = [
    `audit: ${report.ok ? "PASSED" : "FAILED"}`,
    `  responses: ${fmt(report.counts.responses)}`,
    `  approvals: ${fmt(report.counts.approvals)}`,
    `  questions: ${fmt(report.counts.questions)}`,
    `  events: ${report.counts.events} (${report.counts.frames} frames)`,
  ];
  for (const c of report.checks) {
    lines.push(`  ${c.ok ? "ok  " : "FAIL"} ${c.name} (${c.checked} checked)`);
    for (const f of c.failures) lines.push(`         ${f}`);
  }
  return lines;
}
