import { sql } from "drizzle-orm";
import { type Db, rowsOf } from "../client";

/**
 * What people decided about one request (the same agent, action and arguments as asked) in a
 * window: the evidence a policy suggestion stands on (docs/analytics.md#rule-suggestions).
 */
export type TDecisionEvidence = {
  agent: string;
  action: string;
  toolName: string;
  /** Asked from outside (`POST /v1/approvals`): its policy is the agent's entry for the action, or its host tool's. */
  external: boolean;
  requestKey: string;
  arguments: unknown;
  total: number;
  /** Approved as asked, by a person. */
  approved: number;
  /** Denied, with or without a reply. */
  denied: number;
  /** Anything else: edited, expired, cancelled, or settled without a person. */
  other: number;
  /** Distinct people among the approvals as asked. */
  approvers: number;
  /** Distinct people among the denials. */
  deniers: number;
  first: Date;
  last: Date;
};

/**
 * The requests put to people at least `minCount` times in [from, to) whose every outcome was a
 * person's plain approval, or whose every outcome was a denial: the candidates for loosening and
 * tightening (each is then checked against every request its rule would match,
 * {@link matchedDecisions}). One pass over the analytics index, then the arguments of the few found.
 */
export async function decisionEvidence(db: Db, window: { from: Date; to: Date; minCount: number }): Promise<TDecisionEvidence[]> {
  const rows = rowsOf<{
    agent: string;
    action: string;
    request_key: string;
    total: number;
    approved: number;
    denied: number;
    approvers: number;
    deniers: number;
    first: string | Date;
    last: string | Date;
  }>(
    await db.execute(sql`
      select agent, action, request_key, count(*)::int as total,
        count(*) filter (where outcome = 'approved')::int as approved,
        count(*) filter (where outcome in ('denied', 'replied'))::int as denied,
        count(distinct decided_by) filter (where outcome = 'approved')::int as approvers,
        count(distinct decided_by) filter (where outcome in ('denied', 'replied'))::int as deniers,
        min(created_at) as first, max(created_at) as last
      from approvals
      where outcome is not null and outcome not in ('policy', 'grant', 'reviewer')
        and created_at >= ${window.from.toISOString()}::timestamptz and created_at < ${window.to.toISOString()}::timestamptz
      group by agent, action, request_key
      having count(*) >= ${window.minCount}
        and (count(*) filter (where outcome = 'approved') = count(*) or count(*) filter (where outcome in ('denied', 'replied')) = count(*))
      order by count(*) desc, agent, action, request_key`),
  );
  if (rows.length === 0) return [];
  const pairs = sql.join(
    rows.map((r) => sql`(${new Date(r.last).toISOString()}::timestamptz, ${r.request_key})`),
    sql`, `,
  );
  // The latest request of each, found by (created_at, request_key) through the same index.
  const samples = rowsOf<{ request_key: string; tool_name: string; external: boolean; args: unknown }>(
    await db.execute(sql`
      select distinct on (request_key) request_key, tool_name, external, coalesce(original_arguments, arguments) as args
      from approvals where outcome is not null and (created_at, request_key) in (${pairs}) order by request_key, id`),
  );
  const sampleOf = new Map(samples.map((s) => [s.request_key, s]));
  return rows.flatMap((r) => {
    const sample = sampleOf.get(r.request_key);
    if (!sample) return [];
    const args = typeof sample.args === "string" ? (JSON.parse(sample.args) as unknown) : sample.args;
    return [
      {
        agent: r.agent,
        action: r.action,
        toolName: sample.tool_name,
        external: sample.external,
        requestKey: r.request_key,
        arguments: args,
        total: Number(r.total),
        approved: Number(r.approved),
        denied: Number(r.denied),
        other: Number(r.total) - Number(r.approved) - Number(r.denied),
        approvers: Number(r.approvers),
        deniers: Number(r.deniers),
        first: new Date(r.first),
        last: new Date(r.last),
      },
    ];
  });
}

export type TMatchedDecisions = {
  total: number;
  approved: number;
  denied: number;
  other: number;
  approvers: number;
  /** The latest few matched, newest first. */
  latest: Array<{ id: string; responseId: string; createdAt: Date; outcome: string; arguments: unknown }>;
};

/**
 * Every request of `agent` and `action` put to people in [from, to) whose arguments have these
 * exact texts (`arguments->>name = text`; other arguments may differ): what a rule matching them
 * would have matched, with how each ended.
 */
export async function matchedDecisions(db: Db, q: { agent: string; action: string; from: Date; to: Date; equals: Record<string, string> }): Promise<TMatchedDecisions> {
  const conditions = Object.entries(q.equals).map(([name, text]) => sql`coalesce(original_arguments, arguments)->>${name} = ${text}`);
  const where = sql`outcome is not null and outcome not in ('policy', 'grant', 'reviewer') and agent = ${q.agent} and action = ${q.action}
    and created_at >= ${q.from.toISOString()}::timestamptz and created_at < ${q.to.toISOString()}::timestamptz and ${sql.join(conditions, sql` and `)}`;
  const [counts] = rowsOf<{ total: number; approved: number; denied: number; approvers: number }>(
    await db.execute(sql`
      select count(*)::int as total, count(*) filter (where outcome = 'approved')::int as approved,
        count(*) filter (where outcome in ('denied', 'replied'))::int as denied,
        count(distinct decided_by) filter (where outcome = 'approved')::int as approvers
      from approvals where ${where}`),
  );
  const latest = rowsOf<{ id: string; response_id: string; created_at: string | Date; outcome: string; args: unknown }>(
    await db.execute(sql`select id, response_id, created_at, outcome, coalesce(original_arguments, arguments) as args from approvals where ${where} order by created_at desc, id desc limit 10`),
  );
  const total = Number(counts?.total ?? 0);
  const approved = Number(counts?.approved ?? 0);
  const denied = Number(counts?.denied ?? 0);
  return {
    total,
    approved,
    denied,
    other: total - approved - denied,
    approvers: Number(counts?.approvers ?? 0),
    latest: latest.map((r) => ({ id: r.id, responseId: r.response_id, createdAt: new Date(r.created_at), outcome: r.outcome, arguments: typeof r.args === "string" ? (JSON.parse(r.args) as unknown) : r.args })),
  };
}
