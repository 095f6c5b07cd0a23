import { type SQL, sql } from "drizzle-orm";
import { AUTO_OUTCOMES, type TDecisionOutcome } from "../../server/core/vocabulary";
import { type Db, rowsOf } from "../client";
import { exactTimestamp, type TKeysetCursor } from "./keyset";
import { barOfFine, DECISION_TIME_BUCKETS_S, FINE_BOUNDS_S, percentileOf } from "../../server/core/decision-times";

export { DECISION_TIME_BUCKETS_S };

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

const isAuto = (outcome: string): boolean => (AUTO_OUTCOMES as readonly string[]).includes(outcome);

/** The columns a figure reads of each request (a union computes every column it selects, row by row). */
const COLUMNS = {
  all: { approval: sql`id, created_at, outcome, agent, action, user_id, decided_by, decided_at, request_key, 'approval' as source`, gate: sql`id, created_at, settled_by::text, agent, action, user_id, null, created_at, request_key, 'gate'` },
  outcomes: { approval: sql`created_at, outcome`, gate: sql`created_at, settled_by::text` },
  repeated: { approval: sql`created_at, outcome, request_key`, gate: sql`created_at, settled_by::text, request_key` },
  times: { approval: sql`created_at, agent, action, decided_by, decided_at`, gate: null },
  shadow: { approval: sql`shadow, outcome`, gate: sql`shadow, settled_by::text` },
} as const;

/**
 * The period's requests matching the filter, both sources with the same columns (`columns`);
 * `times`: only a person's decisions (approved, edited, denied, replied), which no gate pass is.
 */
function requests(f: TDecisionFilter, columns: keyof typeof COLUMNS = "all"): SQL {
  const approvalWhere = [
    columns === "times" ? sql`outcome in ('approved', 'edited', 'denied', 'replied')` : sql`outcome is not null`,
    columns === "shadow" ? sql`shadow is not null` : null,
    ...periodAndScope(f),
    f.approver ? sql`decided_by = ${f.approver}` : null,
    f.outcome ? sql`outcome = ${f.outcome}` : null,
  ];
  const picked = COLUMNS[columns];
  const approvalsPart = sql`select ${picked.approval} from approvals where ${and(approvalWhere)}`;
  // Nobody decided a gate pass: an approver filter, or an outcome a person gives, leaves none.
  if (!picked.gate || f.approver !== undefined || (f.outcome !== undefined && !isAuto(f.outcome))) return approvalsPart;
  const passWhere = [columns === "shadow" ? sql`shadow is not null` : null, ...periodAndScope(f), f.outcome ? sql`settled_by = ${f.outcome}::settled_by` : null];
  return sql`${approvalsPart} union all select ${picked.gate} from gate_passes where ${and(passWhere)}`;
}

/** The filter's conditions both tables share (the same column names): the period, a member's scope, the agent and the action. */
function periodAndScope(f: TDecisionFilter): Array<SQL | null> {
  return [
    sql`created_at >= ${f.from.toISOString()}::timestamptz`,
    sql`created_at < ${f.to.toISOString()}::timestamptz`,
    f.scopeUserId ? sql`user_id = ${f.scopeUserId}` : null,
    f.agent ? sql`agent = ${f.agent}` : null,
    f.action ? sql`action = ${f.action}` : null,
  ];
}

/** The conditions given, joined with `and` (nulls left out). */
const and = (conditions: ReadonlyArray<SQL | null>): SQL =>
  sql.join(
    conditions.filter((c): c is SQL => c !== null),
    sql` and `,
  );

export type TOutcomeDay = { day: string; outcome: TDecisionOutcome; count: number };
export type TDecisionTimes = { dimension: "agent" | "action" | "approver"; key: string; count: number; p50Ms: number; p90Ms: number };

/** Requests per calendar day (in the filter's zone) and outcome. */
export async function outcomesPerDay(db: Db, f: TDecisionFilter): Promise<TOutcomeDay[]> {
  const zone = f.timeZone ?? "UTC";
  const rows = rowsOf<{ day: string | Date; outcome: TDecisionOutcome; n: number }>(
    await db.execute(sql`select date_trunc('day', created_at, ${zone}) as day, outcome, count(*)::int as n from (${requests(f, "outcomes")}) r group by 1, 2`),
  );
  return rows.map((r) => ({ day: dayText(r.day, zone), outcome: r.outcome, count: Number(r.n) })).sort((a, b) => a.day.localeCompare(b.day) || a.outcome.localeCompare(b.outcome));
}

export type TShadowCounts = { differed: number; wouldAutoApprove: number; wouldAutoApproveDenied: number; wouldAutoApproveEdited: number; wouldAsk: number };

/** What agents' shadow policies would have decided differently (docs/analytics.md#shadow-rules), from the requests that recorded it. */
export async function shadowCounts(db: Db, f: TDecisionFilter): Promise<TShadowCounts> {
  const [row] = rowsOf<{ differed: number; auto: number; denied: number; edited: number; ask: number }>(
    await db.execute(sql`
      select count(*)::int as differed, count(*) filter (where shadow = 'never')::int as auto,
        count(*) filter (where shadow = 'never' and outcome in ('denied', 'replied'))::int as denied,
        count(*) filter (where shadow = 'never' and outcome = 'edited')::int as edited,
        count(*) filter (where shadow <> 'never' and outcome in ('policy', 'grant', 'reviewer'))::int as ask
      from (${requests(f, "shadow")}) r`),
  );
  return { differed: Number(row?.differed ?? 0), wouldAutoApprove: Number(row?.auto ?? 0), wouldAutoApproveDenied: Number(row?.denied ?? 0), wouldAutoApproveEdited: Number(row?.edited ?? 0), wouldAsk: Number(row?.ask ?? 0) };
}

/** Sorting and hashing a period's decisions needs more than the default 4 MB to stay in memory. */
const WORK_MEMORY = "32MB";

/**
 * How long people took to decide: the histogram ({@link DECISION_TIME_BUCKETS_S}) and p50/p90 per
 * agent, action and approver, in one pass over a person's decisions (grouping sets, hashed; the
 * histogram summed from the agents' fine buckets).
 */
export async function decisionTimes(db: Db, f: TDecisionFilter): Promise<{ times: TDecisionTimes[]; histogram: number[] }> {
  const fine = `{${FINE_BOUNDS_S.join(",")}}`;
  const rows = await db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('work_mem', ${WORK_MEMORY}, true)`);
    return rowsOf<{ g: number; agent: string | null; action: string | null; approver: string | null; fine: number | null; n: number }>(
      await tx.execute(sql`
        select grouping(agent, action, decided_by, fine)::int as g, agent, action, decided_by as approver, fine, count(*)::int as n
        from (select agent, action, decided_by, width_bucket(extract(epoch from decided_at - created_at)::float8, ${fine}::float8[]) as fine from (${requests(f, "times")}) q) x
        group by grouping sets ((agent, fine), (action, fine), (decided_by, fine))`),
    );
  });
  // grouping() sets a bit per column NOT grouped, the first column highest.
  const SETS = { agent: 0b0110, action: 0b1010, approver: 0b1100 } as const;
  const histogram: number[] = Array.from({ length: DECISION_TIME_BUCKETS_S.length + 1 }, () => 0);
  const groups = new Map<string, { dimension: TDecisionTimes["dimension"]; key: string; total: number; buckets: Map<number, number> }>();
  for (const r of rows) {
    const n = Number(r.n);
    const g = Number(r.g);
    const dimension = g === SETS.agent ? "agent" : g === SETS.action ? "action" : g === SETS.approver ? "approver" : null;
    const key = dimension === "agent" ? r.agent : dimension === "action" ? r.action : r.approver;
    if (!dimension || key === null || r.fine === null) continue;
    // Every decision has an agent: the agents' rows, summed per bar, are the histogram.
    if (dimension === "agent") histogram[barOfFine(Number(r.fine))] = (histogram[barOfFine(Number(r.fine))] ?? 0) + n;
    const id = `${dimension}\u0000${key}`;
    const group = groups.get(id) ?? { dimension, key, total: 0, buckets: new Map<number, number>() };
    group.total += n;
    group.buckets.set(Number(r.fine), (group.buckets.get(Number(r.fine)) ?? 0) + n);
    groups.set(id, group);
  }
  const times = [...groups.values()]
    .map((group) => ({ dimension: group.dimension, key: group.key, count: group.total, p50Ms: percentileOf(group.buckets, group.total, 0.5), p90Ms: percentileOf(group.buckets, group.total, 0.9) }))
    .sort((a, b) => b.count - a.count || a.key.localeCompare(b.key));
  return { times, histogram };
}

/** A day (the zone's midnight as a timestamptz, as either driver returns it) as `YYYY-MM-DD` in the zone. */
function dayText(value: string | Date, zone: string): string {
  const at = value instanceof Date ? value : new Date(value);
  return new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(at);
}

export type TRepeatedRequest = { requestKey: string; action: string; agent: string; count: number; outcomes: Partial<Record<TDecisionOutcome, number>>; arguments: unknown; sampleId: string };

/**
 * The most repeated requests (the same action and arguments as asked), with their outcomes. One
 * pass counts per request and outcome (with each request's latest time); the arguments and agent
 * are then read for the few shown, found by that time through the analytics indexes.
 */
export async function repeatedRequests(db: Db, f: TDecisionFilter, limit = 20): Promise<TRepeatedRequest[]> {
  const rows = rowsOf<{ request_key: string; outcome: TDecisionOutcome; n: number; total: number; latest: string }>(
    await db.execute(sql`
      with g as (select request_key, outcome, count(*)::int as n, max(created_at) as latest from (${requests(f, "repeated")}) r group by 1, 2),
           t as (select request_key, sum(n)::int as total, max(latest) as latest from g group by 1 order by 2 desc, 1 limit ${limit})
      select g.request_key, g.outcome, g.n, t.total, ${exactTimestamp(sql`t.latest`)} as latest from g join t using (request_key) order by t.total desc, g.request_key`),
  );
  // Each request's latest time exact to the microsecond (a JS Date would round it and find nothing).
  const byKey = new Map<string, { requestKey: string; count: number; outcomes: Partial<Record<TDecisionOutcome, number>>; latest: string }>();
  for (const r of rows) {
    let entry = byKey.get(r.request_key);
    if (!entry) {
      entry = { requestKey: r.request_key, count: Number(r.total), outcomes: {}, latest: r.latest };
      byKey.set(r.request_key, entry);
    }
    entry.outcomes[r.outcome] = Number(r.n);
  }
  const entries = [...byKey.values()];
  if (entries.length === 0) return [];
  const pairs = sql.join(
    entries.map((e) => sql`(${e.latest}::timestamptz, ${e.requestKey})`),
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
  /** Its created_at exact to the microsecond, for the next page's cursor. */
  cursorAt: string;
};

/** The requests behind a figure, newest first, in keyset pages (`after`: the last row's created_at and id). */
export async function requestsPage(
  db: Db,
  f: TDecisionFilter & { day?: string; requestKey?: string; decisionSeconds?: { min?: number; max?: number } },
  page: { limit: number; after?: TKeysetCursor | null },
): Promise<TRequestRow[]> {
  const zone = f.timeZone ?? "UTC";
  const where = [
    f.day ? sql`date_trunc('day', r.created_at, ${zone}) = (${f.day}::date)::timestamp at time zone ${zone}` : null,
    f.requestKey ? sql`r.request_key = ${f.requestKey}` : null,
    // A bucket of the time-to-decide histogram: a person's decisions that took [min, max) seconds.
    f.decisionSeconds ? sql`r.outcome in ('approved', 'edited', 'denied', 'replied')` : null,
    f.decisionSeconds?.min !== undefined ? sql`extract(epoch from r.decided_at - r.created_at) >= ${f.decisionSeconds.min}` : null,
    f.decisionSeconds?.max !== undefined ? sql`extract(epoch from r.decided_at - r.created_at) < ${f.decisionSeconds.max}` : null,
    page.after ? sql`(r.created_at, r.id) < (${page.after.at}::timestamptz, ${page.after.id})` : null,
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
    cursor_at: string;
  }>(
    await db.execute(sql`
      select r.*, ${exactTimestamp(sql`r.created_at`)} as cursor_at, coalesce(a.response_id, g.response_id) as response_id, coalesce(a.tool_name, g.tool_name) as tool_name
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
    cursorAt: r.cursor_at,
  }));
}

/** Pending approvals asked in the period (not yet an outcome). */
export async function pendingCount(db: Db, f: TDecisionFilter): Promise<number> {
  if (f.outcome !== undefined || f.approver !== undefined) return 0;
  const [row] = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from approvals where ${and([sql`status = 'pending'`, ...periodAndScope(f)])}`));
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
