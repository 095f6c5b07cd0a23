import { inArray, sql } from "drizzle-orm";
import { type Db, rowsOf } from "../client";
import { users } from "../schema";
import { exactTimestamp, type TKeysetCursor } from "./keyset";

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
    first: string | Date;
    last: string | Date;
    last_exact: string;
  }>(
    await db.execute(sql`
      select agent, action, request_key, count(*)::int as total,
        count(*) filter (where outcome = 'approved')::int as approved,
        count(*) filter (where outcome in ('denied', 'replied'))::int as denied,
        count(distinct decided_by) filter (where outcome = 'approved')::int as approvers,
        min(created_at) as first, max(created_at) as last, ${exactTimestamp(sql`max(created_at)`)} as last_exact
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
    rows.map((r) => sql`(${r.last_exact}::timestamptz, ${r.request_key})`),
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
  /** Distinct people among the denials. */
  deniers: number;
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
  const [counts] = rowsOf<{ total: number; approved: number; denied: number; approvers: number; deniers: number }>(
    await db.execute(sql`
      select count(*)::int as total, count(*) filter (where outcome = 'approved')::int as approved,
        count(*) filter (where outcome in ('denied', 'replied'))::int as denied,
        count(distinct decided_by) filter (where outcome = 'approved')::int as approvers,
        count(distinct decided_by) filter (where outcome in ('denied', 'replied'))::int as deniers
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
    deniers: Number(counts?.deniers ?? 0),
    latest: latest.map((r) => ({ id: r.id, responseId: r.response_id, createdAt: new Date(r.created_at), outcome: r.outcome, arguments: typeof r.args === "string" ? (JSON.parse(r.args) as unknown) : r.args })),
  };
}

/** One recorded request as a simulation replays it (docs/analytics.md#policy-simulation). */
export type TRecordedRequest = {
  id: string;
  /** Its created_at exact to the microsecond (the next page starts after it). */
  cursorAt: string;
  source: "approval" | "gate";
  createdAt: Date;
  agent: string;
  toolName: string;
  action: string;
  external: boolean;
  /** As asked (before an approver's edit). */
  arguments: unknown;
  outcome: string;
  risk: "low" | "medium" | "high";
  /** The requester (whose run it was). */
  userId: string;
  decidedBy: string | null;
  requiredApprovals: number;
  /** What the exec reviewer said, as recorded: allow, deny, ask (it routed the request to a person), or null (not reviewed). */
  verdict: "allow" | "deny" | "ask" | null;
};

/** The window's decided requests in (created_at, id) order, one keyset page at a time. */
export async function recordedRequests(db: Db, q: { from: Date; to: Date; after?: TKeysetCursor; limit: number }): Promise<TRecordedRequest[]> {
  const after = q.after ? sql`and (created_at, id) > (${q.after.at}::timestamptz, ${q.after.id})` : sql``;
  const period = sql`created_at >= ${q.from.toISOString()}::timestamptz and created_at < ${q.to.toISOString()}::timestamptz ${after}`;
  const rows = rowsOf<{
    id: string;
    source: "approval" | "gate";
    created_at: string | Date;
    agent: string;
    tool_name: string;
    action: string;
    external: boolean;
    args: unknown;
    outcome: string;
    risk: "low" | "medium" | "high";
    user_id: string;
    decided_by: string | null;
    required_approvals: number;
    verdict: "allow" | "deny" | "ask" | null;
    cursor_at: string;
  }>(
    await db.execute(sql`
      select r.*, ${exactTimestamp(sql`r.created_at`)} as cursor_at from (
      (select id, 'approval' as source, created_at, agent, tool_name, action, external, coalesce(original_arguments, arguments) as args, outcome, risk::text as risk, user_id, decided_by, required_approvals,
         case when outcome = 'reviewer' then (case when status = 'approved' then 'allow' else 'deny' end) when reviewer is not null then 'ask' end as verdict
       from approvals where outcome is not null and ${period} order by created_at, id limit ${q.limit})
      union all
      (select id, 'gate', created_at, agent, tool_name, action, false, arguments, settled_by::text, risk::text, user_id, null, 1,
         case when settled_by = 'reviewer' then (case when decision = 'approve' then 'allow' else 'deny' end) end
       from gate_passes where ${period} order by created_at, id limit ${q.limit})
      ) r order by created_at, id limit ${q.limit}`),
  );
  return rows.map((r) => ({
    id: r.id,
    cursorAt: r.cursor_at,
    source: r.source,
    createdAt: new Date(r.created_at),
    agent: r.agent,
    toolName: r.tool_name,
    action: r.action,
    external: r.external,
    arguments: typeof r.args === "string" ? (JSON.parse(r.args) as unknown) : r.args,
    outcome: r.outcome,
    risk: r.risk,
    userId: r.user_id,
    decidedBy: r.decided_by,
    requiredApprovals: Number(r.required_approvals),
    verdict: r.verdict,
  }));
}

/** The people who decided, as the decision rule sees them now (role, email, teams). */
export async function decidersByIds(db: Db, ids: readonly string[]): Promise<Array<{ userId: string; role: (typeof users.$inferSelect)["role"]; name: string; email: string; groups: string[] }>> {
  if (ids.length === 0) return [];
  return db.select({ userId: users.id, role: users.role, name: users.name, email: users.email, groups: users.groups }).from(users).where(inArray(users.id, [...ids]));
}
