import { z } from "zod";
import {
  DECISION_TIME_BUCKETS_S,
  decisionTimes,
  expiredRequests,
  outcomesPerDay,
  shadowCounts,
  pendingCount,
  repeatedRequests,
  requestsPage,
  type TDecisionFilter,
} from "../../../db/repositories/analytics";
import { peopleByIds } from "../../../db/repositories/display-names";
import { decodeCursor, encodeCursor } from "../../../db/repositories/keyset";
import { userIdByEmailIgnoringCase } from "../../../db/repositories/users";
import { DomainError } from "../../core/errors";
import type { TReadScope } from "../../core/read-scope";
import { dayIn, ZTimeZone } from "../../core/time-zone";
import { DECISION_OUTCOMES, type TDecisionOutcome } from "../../core/vocabulary";
import type { TDeps } from "../../host/deps";

/**
 * Decision analytics (docs/analytics.md): where people's attention goes. One read for the
 * console's page, its tRPC procedures and `GET /v1/analytics/decisions`; a member's scope sees
 * its own requests only.
 */

const DAY_MS = 86_400_000;
/** The default period: the last 30 days. */
export const DEFAULT_ANALYTICS_DAYS = 30;
/** The longest period one query covers (the window the analytics, suggestions and simulation accept). */
export const MAX_ANALYTICS_DAYS = 365;

const ZInstant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

/** The filter as the transports accept it (query strings give strings). */
export const ZDecisionQuery = z.strictObject({
  from: ZInstant.optional().describe("Start of the period (ISO 8601, inclusive); default: 30 days before `to`"),
  to: ZInstant.optional().describe("End of the period (ISO 8601, exclusive); default: now"),
  agent: z.string().min(1).max(64).optional(),
  action: z.string().min(1).max(200).optional(),
  approver: z.string().min(1).max(320).optional().describe("Who decided: a user id or an email address (only requests a person decided)"),
  outcome: z.enum(DECISION_OUTCOMES).optional(),
  timeZone: ZTimeZone.optional().describe("Calendar days in this IANA zone (default UTC)"),
});
export type TDecisionQuery = z.input<typeof ZDecisionQuery>;

const ZCount = z.number().int().nonnegative();
const ZTimes = z.object({ key: z.string(), name: z.string().optional(), count: ZCount, p50Ms: z.number().int(), p90Ms: z.number().int() });

/** The figures, as `/v1` and tRPC return them. */
export const ZDecisionAnalytics = z.object({
  from: z.string().describe("The period's start (ISO 8601)"),
  to: z.string(),
  timeZone: z.string(),
  totals: z.object({ requests: ZCount.describe("Decided requests in the period"), pending: ZCount.describe("Approvals still waiting"), ...Object.fromEntries(DECISION_OUTCOMES.map((o) => [o, ZCount])) }),
  perDay: z.array(z.object({ day: z.string().describe("YYYY-MM-DD in timeZone"), counts: z.record(z.enum(DECISION_OUTCOMES), ZCount) })).describe("Every day of the period, oldest first"),
  shadow: z
    .object({
      differed: ZCount.describe("Requests an agent's shadow policy would have decided differently"),
      wouldAutoApprove: ZCount.describe("…of which it would have let through without a person"),
      wouldAutoApproveDenied: ZCount.describe("…of those, a person denied (or replied to)"),
      wouldAutoApproveEdited: ZCount.describe("…of those, a person approved only after an edit"),
      wouldAsk: ZCount.describe("…of which it would have put to a person (settled without one live)"),
    })
    .describe("Shadow rules (docs/analytics.md#shadow-rules)"),
  decisionTimes: z.object({
    byAgent: z.array(ZTimes),
    byAction: z.array(ZTimes),
    byApprover: z.array(ZTimes).describe("key: the approver's user id; name: their name"),
    histogram: z.array(z.object({ upToSeconds: z.number().int().nullable().describe("The bucket's upper bound (null: the rest)"), count: ZCount })),
  }),
  repeated: z.array(
    z.object({
      requestKey: z.string().describe("The request's key: its action and arguments as asked"),
      action: z.string(),
      agent: z.string(),
      arguments: z.unknown(),
      count: ZCount,
      outcomes: z.record(z.enum(DECISION_OUTCOMES), ZCount),
    }),
  ),
  expired: z.array(
    z.object({ id: z.string(), responseId: z.string(), agent: z.string(), action: z.string(), message: z.string(), createdAt: z.string(), expiredAt: z.string().nullable(), notified: z.array(z.string()).describe("Every recipient a notification of it went to") }),
  ),
});
export type TDecisionAnalytics = z.infer<typeof ZDecisionAnalytics>;

/** Checks the period and resolves the approver: the repository's filter, or a clear error (400). */
async function filterOf(deps: Pick<TDeps, "db" | "now">, scope: TReadScope, query: z.output<typeof ZDecisionQuery>): Promise<TDecisionFilter> {
  const to = query.to ?? deps.now();
  const from = query.from ?? new Date(to.getTime() - DEFAULT_ANALYTICS_DAYS * DAY_MS);
  if (from.getTime() >= to.getTime()) throw new DomainError("invalid_request", "from must be before to.");
  if (to.getTime() - from.getTime() > MAX_ANALYTICS_DAYS * DAY_MS) throw new DomainError("invalid_request", `The period is longer than ${MAX_ANALYTICS_DAYS} days; ask for at most ${MAX_ANALYTICS_DAYS} days at a time.`);
  let approver = query.approver;
  if (approver?.includes("@")) approver = (await userIdByEmailIgnoringCase(deps.db, approver)) ?? approver;
  return {
    from,
    to,
    scopeUserId: scope.userId,
    ...(query.agent ? { agent: query.agent } : {}),
    ...(query.action ? { action: query.action } : {}),
    ...(approver ? { approver } : {}),
    ...(query.outcome ? { outcome: query.outcome } : {}),
    timeZone: query.timeZone ?? "UTC",
  };
}

const zeroCounts = (): Record<TDecisionOutcome, number> => Object.fromEntries(DECISION_OUTCOMES.map((o) => [o, 0])) as Record<TDecisionOutcome, number>;

/** Every calendar day of [from, to) in the zone, oldest first. */
function daysOf(from: Date, to: Date, timeZone: string): string[] {
  const days: string[] = [];
  const last = dayIn(new Date(to.getTime() - 1), timeZone);
  // Noon steps cross every calendar day once whatever the zone's offset or a DST change.
  for (let at = from.getTime(); ; at += DAY_MS / 2) {
    const day = dayIn(new Date(Math.min(at, to.getTime() - 1)), timeZone);
    if (days[days.length - 1] !== day) days.push(day);
    if (day === last || at >= to.getTime()) break;
  }
  return days;
}

type TReadDeps = Pick<TDeps, "db" | "now">;
type TQuery = z.output<typeof ZDecisionQuery>;
type TPeriod = Pick<TDecisionAnalytics, "from" | "to" | "timeZone">;
const periodOf = (f: TDecisionFilter): TPeriod => ({ from: f.from.toISOString(), to: f.to.toISOString(), timeZone: f.timeZone ?? "UTC" });

/*
 * One read per chart, each one statement (or two) over the analytics indexes: the console asks for
 * each chart on its own, so one chart's time is its own (docs/analytics.md#speed). `decisionAnalytics`
 * is all of them at once (`GET /v1/analytics/decisions`).
 */

/** The totals per outcome (and still waiting), every day of the period with its count per outcome, and what shadow policies would have done. */
export async function decisionOutcomes(deps: TReadDeps, scope: TReadScope, query: TQuery): Promise<TPeriod & Pick<TDecisionAnalytics, "totals" | "perDay" | "shadow">> {
  const f = await filterOf(deps, scope, query);
  const [days, pending, shadow] = await Promise.all([outcomesPerDay(deps.db, f), pendingCount(deps.db, f), shadowCounts(deps.db, f)]);
  const totals = zeroCounts();
  const perDay = new Map(daysOf(f.from, f.to, f.timeZone ?? "UTC").map((day) => [day, zeroCounts()]));
  for (const d of days) {
    totals[d.outcome] += d.count;
    const counts = perDay.get(d.day) ?? zeroCounts();
    counts[d.outcome] += d.count;
    perDay.set(d.day, counts);
  }
  return {
    ...periodOf(f),
    totals: { requests: Object.values(totals).reduce((a, b) => a + b, 0), pending, ...totals },
    perDay: [...perDay.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([day, counts]) => ({ day, counts })),
    shadow,
  };
}

/** How long people took: the histogram and p50/p90 per agent, action and approver (with the approver's name). */
export async function decisionTimesOf(deps: TReadDeps, scope: TReadScope, query: TQuery): Promise<TPeriod & Pick<TDecisionAnalytics, "decisionTimes">> {
  const f = await filterOf(deps, scope, query);
  const { times, histogram } = await decisionTimes(deps.db, f);
  const approverIds = times.filter((t) => t.dimension === "approver").map((t) => t.key);
  const names = new Map((await peopleByIds(deps.db, approverIds)).map((p) => [p.id, p.name]));
  const of = (dimension: string) =>
    times.filter((t) => t.dimension === dimension).map(({ key, count, p50Ms, p90Ms }) => ({ key, ...(names.has(key) ? { name: names.get(key) } : {}), count, p50Ms, p90Ms }));
  return {
    ...periodOf(f),
    decisionTimes: { byAgent: of("agent"), byAction: of("action"), byApprover: of("approver"), histogram: histogram.map((count, i) => ({ upToSeconds: DECISION_TIME_BUCKETS_S[i] ?? null, count })) },
  };
}

/** The most repeated requests with their outcomes. */
export async function repeatedOf(deps: TReadDeps, scope: TReadScope, query: TQuery): Promise<TPeriod & Pick<TDecisionAnalytics, "repeated">> {
  const f = await filterOf(deps, scope, query);
  const repeated = await repeatedRequests(deps.db, f);
  return { ...periodOf(f), repeated: repeated.map(({ requestKey, action, agent, arguments: args, count, outcomes }) => ({ requestKey, action, agent, arguments: args, count, outcomes: { ...zeroCounts(), ...outcomes } })) };
}

/** The latest expiries and whom they notified. */
export async function expiriesOf(deps: TReadDeps, scope: TReadScope, query: TQuery): Promise<TPeriod & Pick<TDecisionAnalytics, "expired">> {
  const f = await filterOf(deps, scope, query);
  const expired = await expiredRequests(deps.db, f);
  return { ...periodOf(f), expired: expired.map((e) => ({ ...e, createdAt: e.createdAt.toISOString(), expiredAt: e.expiredAt?.toISOString() ?? null })) };
}

/** Every figure of one period and filter (the charts' reads at once; the period fixed once for all). */
export async function decisionAnalytics(deps: TReadDeps, scope: TReadScope, query: TQuery): Promise<TDecisionAnalytics> {
  const to = query.to ?? deps.now();
  const fixed = { ...query, to, from: query.from ?? new Date(to.getTime() - DEFAULT_ANALYTICS_DAYS * DAY_MS) };
  const [outcomes, times, repeated, expired] = await Promise.all([decisionOutcomes(deps, scope, fixed), decisionTimesOf(deps, scope, fixed), repeatedOf(deps, scope, fixed), expiriesOf(deps, scope, fixed)]);
  return { ...outcomes, decisionTimes: times.decisionTimes, repeated: repeated.repeated, expired: expired.expired };
}

/** The requests behind a figure: the filter, optionally one day (in the zone) or one repeated request. */
export const ZDecisionRequestsQuery = ZDecisionQuery.extend({
  day: z.iso.date().optional(),
  requestKey: z.string().regex(/^[0-9a-f]{32}$/, "requestKey is a request's 32-hex key").optional(),
  decisionSecondsMin: z.number().int().nonnegative().optional().describe("A person decided it after at least this many seconds (a histogram bucket's lower bound)"),
  decisionSecondsMax: z.number().int().positive().optional().describe("… and in fewer than this many (its upper bound)"),
  /** tRPC's infinite queries add it; the list only goes one way (older). */
  direction: z.enum(["forward", "backward"]).optional(),
  limit: z.number().int().min(1).max(200).default(50),
  cursor: z.string().max(400).nullish().describe("The nextCursor of the page before (one this list did not give starts at the first page)"),
});

/** One page of the requests behind a figure, newest first, with the names of the people on it. */
export async function decisionRequests(deps: Pick<TDeps, "db" | "now">, scope: TReadScope, query: z.output<typeof ZDecisionRequestsQuery>) {
  const f = await filterOf(deps, scope, query);
  const seconds = query.decisionSecondsMin !== undefined || query.decisionSecondsMax !== undefined ? { decisionSeconds: { min: query.decisionSecondsMin, max: query.decisionSecondsMax } } : {};
  const rows = await requestsPage(
    deps.db,
    { ...f, ...(query.day ? { day: query.day } : {}), ...(query.requestKey ? { requestKey: query.requestKey } : {}), ...seconds },
    { limit: query.limit + 1, after: decodeCursor(query.cursor) },
  );
  const page = rows.slice(0, query.limit);
  const people = new Map((await peopleByIds(deps.db, [...new Set(page.flatMap((r) => [r.userId, ...(r.decidedBy ? [r.decidedBy] : [])]))])).map((p) => [p.id, p.name]));
  const last = page[page.length - 1];
  return {
    rows: page.map(({ cursorAt: _, ...r }) => ({
      ...r,
      createdAt: r.createdAt.toISOString(),
      decidedAt: r.decidedAt?.toISOString() ?? null,
      user: people.get(r.userId) ?? r.userId,
      decider: r.decidedBy ? (people.get(r.decidedBy) ?? r.decidedBy) : null,
    })),
    nextCursor: rows.length > query.limit && last ? encodeCursor({ at: last.cursorAt, id: last.id }) : null,
  };
}
