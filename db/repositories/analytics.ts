import { type SQL, sql } from "drizzle-orm";
import { AUTO_OUTCOMES, type TDecisionOutcome } from "../../server/core/vocabulary";
import { type Db, rowsOf } from "../client";

/**
 * Decision analytics (docs/analytics.md): every gated request once, in exactly one outcome. A
 * request put to a person, or asked from outside, is an approval row (its `outcome` computed by
 * the database); a hosted call the gate settled without one is a gate pass. Both are read through
 * their analytics indexes (the period first, then every column a figure groups by), so the
 * figures are computed in SQL without reading the tables' rows.
 */
export type TDecisionFilter = {
  from: Date;
  to: Date;
  /** A member's own requests only; null: everyone's. */
  scopeUserId: string | null;
  agent?: string;
  action?: string;
  /** Who decided (a user id): only requests a person decided. */
  approver?: string;
  outcome?: TDecisionOutcome;
  /** Calendar days in this IANA zone (the caller validated it); UTC by default. */
  timeZone?: string;
};

/** The outcomes a person gave (their time to decide is measured). */
export const PERSON_OUTCOMES = ["approved", "edited", "denied", "replied"] as const;

const isAuto = (outcome: string): boolean => (AUTO_OUTCOMES as readonly string[]).includes(outcome);

/** The period's requests matching the filter: both sources, the same columns. */
function requests(f: TDecisionFilter): SQL {
  const approvalWhere = [
    sql`outcome is not null`,
    sql`created_at >= ${f.from.toISOString()}::timestamptz`,
    sql`created_at < ${f.to.toISOString()}::timestamptz`,
    f.scopeUserId ? sql`user_id = ${f.scopeUserId}` : null,
    f.agent ? sql`agent = ${f.agent}` : null,
    f.action ? sql`action = ${f.action}` : null,
    f.approver ? sql`decided_by = ${f.approver}` : null,
    f.outcome ? sql`outcome = ${f.outcome}` : null,
  ].filter((w): w is SQL => w !== null);
  // Nobody decided a gate pass: an approver filter, or an outcome a person gives, leaves none.
  const noPasses = f.approver !== undefined || (f.outcome !== undefined && !isAuto(f.outcome));
  const passWhere = [
    sql`created_at >= ${f.from.toISOString()}::timestamptz`,
    sql`created_at < ${f.to.toISOString()}::timestamptz`,
    f.scopeUserId ? sql`user_id = ${f.scopeUserId}` : null,
    f.agent ? sql`agent = ${f.agent}` : null,
    f.action ? sql`action = ${f.action}` : null,
    f.outcome ? sql`settled_by = ${f.outcome}::settled_by` : null,
  ].filter((w): w is SQL => w !== null);
  const approvalsPart = sql`select id, created_at, outcome, agent, action, user_id, decided_by, decided_at, request_key, 'approval' as source from approvals where ${sql.join(approvalWhere, sql` and `)}`;
  if (noPasses) return approvalsPart;
  return sql`${approvalsPart} union all select id, created_at, settled_by::text, agent, action, user_id, null, created_at, request_key, 'gate' from gate_passes where ${sql.join(passWhere, sql` and `)}`;
}

export type TOutcomeDay = { day: string; outcome: TDecisionOutcome; count: number };

/** Requests per calendar day and outcome. */
export async function outcomesPerDay(db: Db, f: TDecisionFilter): Promise<TOutcomeDay[]> {
  const zone = f.timeZone ?? "UTC";
  const rows = rowsOf<{ day: string; outcome: TDecisionOutcome; count: number }>(
    await db.execute(sql`
      select to_char(d.day at time zone ${zone}, 'YYYY-MM-DD') as day, d.outcome, d.count
      from (select date_trunc('day', created_at, ${zone}) as day, outcome, count(*)::int as count from (${requests(f)}) r group by 1, 2) d
      order by 1, 2`),
  );
  return rows.map((r) => ({ day: r.day, outcome: r.outcome, count: Number(r.count) }));
}

export type TDecisionTimes = { dimension: "agent" | "action" | "approver"; key: string; count: number; p50Ms: number; p90Ms: number };

/** Sorting a period's decisions for their percentiles needs more than the default 4 MB to stay in memory. */
const SORT_MEMORY = "32MB";

/** How long people took to decide (created → decided): p50 and p90 per agent, action and approver. */
export async function decisionTimes(db: Db, f: TDecisionFilter): Promise<TDecisionTimes[]> {
  const rows = await db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('work_mem', ${SORT_MEMORY}, true)`);
    return rowsOf<{ agent: string | null; action: string | null; approver: string | null; count: number; p50: number; p90: number }>(
      await tx.execute(sql`
        select agent, action, decided_by as approver, count(*)::int as count,
          percentile_cont(0.5) within group (order by ms) as p50, percentile_cont(0.9) within group (order by ms) as p90
        from (select agent, action, decided_by, extract(epoch from decided_at - created_at) * 1000 as ms from (${requests(f)}) r
              where outcome in ('approved', 'edited', 'denied', 'replied')) t
        group by grouping sets ((agent), (action), (decided_by))
        order by count desc`),
    );
  });
  return rows.map((r) => {
    const dimension = r.agent !== null ? "agent" : r.action !== null ? "action" : "approver";
    const key = r.agent ?? r.action ?? r.approver ?? "";
    return { dimension, key, count: Number(r.count), p50Ms: Math.round(Number(r.p50)), p90Ms: Math.round(Number(r.p90)) };
  });
}

/** The histogram's upper bounds in seconds (the last bucket has none). */
export const DECISION_TIME_BUCKETS_S = [10, 30, 60, 300, 900, 3600, 14_400, 86_400] as const;

/** How many person decisions fell in each bucket of {@link DECISION_TIME_BUCKETS_S} (one more for the rest). */
export async function decisionTimeHistogram(db: Db, f: TDecisionFilter): Promise<number[]> {
  const bounds = `{${DECISION_TIME_BUCKETS_S.join(",")}}`;
  const rows = rowsOf<{ bucket: number; count: number }>(
    await db.execute(sql`
      select width_bucket(extract(epoch from decided_at - created_at)::float8, ${bounds}::float8[]) as bucket, count(*)::int as count
      from (${requests(f)}) r where outcome in ('approved', 'edited', 'denied', 'replied') group by 1`),
  );
  const counts: number[] = Array.from({ length: DECISION_TIME_BUCKETS_S.length + 1 }, () => 0);
  for (const r of rows) counts[Number(r.bucket)] = (counts[Number(r.bucket)] ?? 0) + Number(r.count);
  return counts;
}

export type TRepeatedRequest = { requestKey: string; action: string; agent: string; count: number; outcomes: Partial<Record<TDecisionOutcome, number>>; arguments: unknown; sampleId: string };

/**
 * The most repeated requests (the same action and arguments as asked), with their outcomes. One
 * pass counts per request and outcome (with each request's latest time); the arguments and agent
 * are then read for the few shown, found by that time through the analytics indexes.
 */
export async function repeatedRequests(db: Db, f: TDecisionFilter, limit = 20): Promise<TRepeatedRequest[]> {
  const rows = rowsOf<{ request_key: string; outcome: TDecisionOutcome; n: number; total: number; latest: string | Date }>(
    await db.execute(sql`
      with g as (select request_key, outcome, count(*)::int as n, max(created_at) as latest from (${requests(f)}) r group by 1, 2),
           t as (select request_key, sum(n)::int as total, max(latest) as latest from g group by 1 order by 2 desc, 1 limit ${limit})
      select g.request_key, g.outcome, g.n, t.total, t.latest from g join t using (request_key) order by t.total desc, g.request_key`),
  );
  const byKey = new Map<string, { requestKey: string; count: number; outcomes: Partial<Record<TDecisionOutcome, number>>; latest: Date }>();
  for (const r of rows) {
    let entry = byKey.get(r.request_key);
    if (!entry) {
      entry = { requestKey: r.request_key, count: Number(r.total), outcomes: {}, latest: new Date(r.latest) };
      byKey.set(r.request_key, entry);
    }
    entry.outcomes[r.outcome] = Number(r.n);
  }
  const entries = [...byKey.values()];
  if (entries.length === 0) return [];
  const pairs = sql.join(
    entries.map((e) => sql`(${e.latest.toISOString()}::timestamptz, ${e.requestKey})`),
    sql`, `,
  );
  // The latest request of each: by (created_at, request_key), the first columns its source's index has.
  const samples = rowsOf<{ request_key: string; id: string; action: string; agent: string; args: unknown }>(
    await db.execute(sql`
      select distinct on (request_key) request_key, id, action, agent, args from (
        select request_key, id, action, agent, coalesce(original_arguments, arguments) as args from approvals where outcome is not null and (created_at, request_key) in (${pairs})
        union all
        select request_key, id, action, agent, arguments from gate_passes where (created_at, request_key) in (${pairs})) s
      order by request_key, id`),
  );
  const sampleOf = new Map(samples.map((r) => [r.request_key, r]));
  return entries.map((e) => {
    const sample = sampleOf.get(e.requestKey);
    return { requestKey: e.requestKey, action: sample?.action ?? "", agent: sample?.agent ?? "", count: e.count, outcomes: e.outcomes, arguments: parsedJson(sample?.args ?? null), sampleId: sample?.id ?? "" };
  });
}

export type TExpiredRequest = { id: string; responseId: string; agent: string; action: string; message: string; createdAt: Date; expiredAt: Date | null; notified: string[] };

/** The period's latest expired approvals (read backwards through the analytics index), and whom their notifications went to. */
export async function expiredRequests(db: Db, f: TDecisionFilter, limit = 20): Promise<TExpiredRequest[]> {
  if (f.outcome !== undefined && f.outcome !== "expired") return [];
  if (f.approver !== undefined) return [];
  const where = [
    sql`a.outcome = 'expired'`,
    sql`a.created_at >= ${f.from.toISOString()}::timestamptz`,
    sql`a.created_at < ${f.to.toISOString()}::timestamptz`,
    f.scopeUserId ? sql`a.user_id = ${f.scopeUserId}` : null,
    f.agent ? sql`a.agent = ${f.agent}` : null,
    f.action ? sql`a.action = ${f.action}` : null,
  ].filter((w): w is SQL => w !== null);
  const rows = rowsOf<{ id: string; response_id: string; agent: string; action: string; message: string; created_at: string | Date; decided_at: string | Date | null; notified: string[] | string | null }>(
    await db.execute(sql`
      select a.id, a.response_id, a.agent, a.action, a.message, a.created_at, a.decided_at,
        (select coalesce(array_agg(distinct n.recipient order by n.recipient), '{}') from notifications n where n.subject_id = a.id) as notified
      from approvals a where ${sql.join(where, sql` and `)}
      order by a.created_at desc, a.id desc limit ${limit}`),
  );
  return rows.map((r) => ({
    id: r.id,
    responseId: r.response_id,
    agent: r.agent,
    action: r.action,
    message: r.message,
    createdAt: new Date(r.created_at),
    expiredAt: r.decided_at === null ? null : new Date(r.decided_at),
    notified: textArray(r.notified),
  }));
}

export type TRequestRow = {
  id: string;
  source: "approval" | "gate";
  responseId: string;
  createdAt: Date;
  outcome: TDecisionOutcome;
  agent: string;
  action: string;
  toolName: string;
  userId: string;
  decidedBy: string | null;
  decidedAt: Date | null;
  requestKey: string;
};

/** The requests behind a figure, newest first, in keyset pages (`after`: the last row's created_at and id). */
export async function requestsPage(
  db: Db,
  f: TDecisionFilter & { day?: string; requestKey?: string; decisionSeconds?: { min?: number; max?: number } },
  page: { limit: number; after?: { createdAt: Date; id: string } },
): Promise<TRequestRow[]> {
  const zone = f.timeZone ?? "UTC";
  const where = [
    f.day ? sql`date_trunc('day', r.created_at, ${zone}) = (${f.day}::date)::timestamp at time zone ${zone}` : null,
    f.requestKey ? sql`r.request_key = ${f.requestKey}` : null,
    // A bucket of the time-to-decide histogram: a person's decisions that took [min, max) seconds.
    f.decisionSeconds ? sql`r.outcome in ('approved', 'edited', 'denied', 'replied')` : null,
    f.decisionSeconds?.min !== undefined ? sql`extract(epoch from r.decided_at - r.created_at) >= ${f.decisionSeconds.min}` : null,
    f.decisionSeconds?.max !== undefined ? sql`extract(epoch from r.decided_at - r.created_at) < ${f.decisionSeconds.max}` : null,
    page.after ? sql`(r.created_at, r.id) < (${page.after.createdAt.toISOString()}::timestamptz, ${page.after.id})` : null,
  ].filter((w): w is SQL => w !== null);
  const rows = rowsOf<{
    id: string;
    source: "approval" | "gate";
    created_at: string | Date;
    outcome: TDecisionOutcome;
    agent: string;
    action: string;
    user_id: string;
    decided_by: string | null;
    decided_at: string | Date | null;
    request_key: string;
    response_id: string;
    tool_name: string;
  }>(
    await db.execute(sql`
      select r.*, coalesce(a.response_id, g.response_id) as response_id, coalesce(a.tool_name, g.tool_name) as tool_name
      from (select * from (${requests(f)}) r ${where.length > 0 ? sql`where ${sql.join(where, sql` and `)}` : sql``} order by created_at desc, id desc limit ${page.limit}) r
      left join approvals a on r.source = 'approval' and a.id = r.id
      left join gate_passes g on r.source = 'gate' and g.id = r.id
      order by r.created_at desc, r.id desc`),
  );
  return rows.map((r) => ({
    id: r.id,
    source: r.source,
    responseId: r.response_id,
    createdAt: new Date(r.created_at),
    outcome: r.outcome,
    agent: r.agent,
    action: r.action,
    toolName: r.tool_name,
    userId: r.user_id,
    decidedBy: r.decided_by,
    decidedAt: r.decided_at === null ? null : new Date(r.decided_at),
    requestKey: r.request_key,
  }));
}

/** Pending approvals asked in the period (not yet an outcome). */
export async function pendingCount(db: Db, f: TDecisionFilter): Promise<number> {
  if (f.outcome !== undefined || f.approver !== undefined) return 0;
  const where = [
    sql`status = 'pending'`,
    sql`created_at >= ${f.from.toISOString()}::timestamptz`,
    sql`created_at < ${f.to.toISOString()}::timestamptz`,
    f.scopeUserId ? sql`user_id = ${f.scopeUserId}` : null,
    f.agent ? sql`agent = ${f.agent}` : null,
    f.action ? sql`action = ${f.action}` : null,
  ].filter((w): w is SQL => w !== null);
  const [row] = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from approvals where ${sql.join(where, sql` and `)}`));
  return Number(row?.n ?? 0);
}

/** postgres.js parses jsonb; PGlite returns it parsed too, but a raw `execute` of an expression may give text. */
const parsedJson = (value: unknown): unknown => {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
};

/** A text[] as either driver returns it from a raw statement. */
const textArray = (value: string[] | string | null): string[] => {
  if (value === null) return [];
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, "");
  return inner === "" ? [] : inner.split(",").map((s) => s.replace(/^"|"$/g, ""));
};
