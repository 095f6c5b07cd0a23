import { type AnyColumn, and, asc, eq, gt, gte, ilike, inArray, isNotNull, isNull, like, lt, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";
import { responseEvents } from "../schema";
import { containsPattern } from "./keyset";
import { EVENT_CATEGORY_NAMES, type TEventCategory } from "../../server/core/vocabulary";

export { EVENT_CATEGORY_NAMES, type TEventCategory };

/** The audit view's event categories, as exact types and type prefixes (`%`). */
export const EVENT_CATEGORIES: Record<TEventCategory, readonly string[]> = {
  model: ["response.text.delta", "response.thinking.delta", "response.plan%", "model.%"],
  tool: ["response.tool_call", "response.tool_result", "client_tool.%", "device.%"],
  approval: ["approval.%"],
  review: ["review.%"],
  question: ["question.%"],
  steering: ["steer.%"],
  usage: ["response.usage"],
  lifecycle: ["response.created", "response.completed", "response.cancelled", "harness.%", "attempt.%", "transcript.%", "agent_end.%", "session.%"],
};

/**
 * Which trajectory: one response's (ordered by `seq`) or one session's (ordered by the global
 * event id, which follows commit order across its responses). Filters are optional.
 */
export type TTrajectoryFilter = {
  responseId?: string;
  sessionId?: string;
  /** Every event created in [from, to), in event id order (the CLI's time-range export). */
  range?: { from: Date; to: Date };
  categories?: readonly TEventCategory[];
  /** A user id, or `system` for events no person caused. */
  actor?: string;
  /** Case-insensitive text found in the event type or anywhere in its data. */
  q?: string;
};

export type TTrajectoryRow = {
  /** The keyset position: `seq` for a response's trajectory, the event id for a session's. */
  key: number;
  seq: number;
  frameSeq: number | null;
  responseId: string;
  type: string;
  data: Record<string, unknown>;
  actorUserId: string | null;
  transport: string | null;
  createdAt: Date;
};

type TColumns = { type: AnyColumn; data: AnyColumn; actorUserId: AnyColumn };

/** The filter's conditions on the given columns (the table's, or a bounded scan's). */
function filterConditions(filter: TTrajectoryFilter, c: TColumns): SQL[] {
  const out: SQL[] = [];
  if (filter.categories && filter.categories.length > 0) {
    const patterns = filter.categories.flatMap((cat) => EVENT_CATEGORIES[cat]);
    const exact = patterns.filter((p) => !p.includes("%"));
    const prefixes = patterns.filter((p) => p.includes("%"));
    const any = or(exact.length > 0 ? inArray(c.type, exact) : undefined, ...prefixes.map((p) => like(c.type, p)));
    if (any) out.push(any);
  }
  if (filter.actor === "system") out.push(isNull(c.actorUserId));
  else if (filter.actor) out.push(eq(c.actorUserId, filter.actor));
  if (filter.q) {
    const pattern = containsPattern(filter.q);
    const text = or(ilike(c.type, pattern), sql`${c.data}::text ilike ${pattern}`);
    if (text) out.push(text);
  }
  return out;
}

function scopeCondition(filter: TTrajectoryFilter): SQL {
  if (filter.responseId) return eq(responseEvents.responseId, filter.responseId);
  if (filter.sessionId) return eq(responseEvents.sessionId, filter.sessionId);
  if (filter.range) return and(gte(responseEvents.createdAt, filter.range.from), lt(responseEvents.createdAt, filter.range.to)) as SQL;
  throw new Error("searchTrajectory needs a responseId, a sessionId or a range");
}

/** Events read per filtered request at most: a search costs the same at any depth and size. */
export const SCAN_WINDOW = 20_000;

export type TTrajectoryPage = {
  rows: TTrajectoryRow[];
  /** Where the next page starts (exclusive); null at the end of the trajectory. */
  nextAfter: number | null;
};

/**
 * One keyset page of a trajectory after position `after` (exclusive), oldest first. Unfiltered,
 * it reads the (response_id, seq) or (session_id, id) index directly. Filtered, it reads a bounded
 * window of at most SCAN_WINDOW events in index order and filters those: a page may hold fewer
 * matches than `limit` (even none) while `nextAfter` says where to go on, so no request scans more.
 */
export async function searchTrajectory(db: Db, filter: TTrajectoryFilter, page: { after: number | null; limit: number }): Promise<TTrajectoryPage> {
  const key = filter.responseId ? responseEvents.seq : responseEvents.id;
  const scope = and(scopeCondition(filter), page.after !== null ? gt(key, page.after) : undefined);
  const fields = {
    key: sql<number>`${key}`.as("key"),
    seq: responseEvents.seq,
    frameSeq: responseEvents.frameSeq,
    responseId: responseEvents.responseId,
    type: responseEvents.type,
    data: responseEvents.data,
    actorUserId: responseEvents.actorUserId,
    transport: responseEvents.transport,
    createdAt: responseEvents.createdAt,
  };
  const filtered = Boolean(filter.q || filter.actor || (filter.categories && filter.categories.length > 0));
  if (!filtered) {
    const rows = await db.select(fields).from(responseEvents).where(scope).orderBy(asc(key)).limit(page.limit);
    const out = rows.map((r) => ({ ...r, key: Number(r.key) }));
    return { rows: out, nextAfter: out.length === page.limit ? (out[out.length - 1]?.key ?? null) : null };
  }
  const scanned = db.select(fields).from(responseEvents).where(scope).orderBy(asc(key)).limit(SCAN_WINDOW).as("scanned");
  const rows = await db
    .select()
    .from(scanned)
    .where(and(...filterConditions(filter, scanned)))
    .orderBy(asc(scanned.key))
    .limit(page.limit);
  const out = rows.map((r) => ({ ...r, key: Number(r.key), createdAt: new Date(r.createdAt) }));
  if (out.length === page.limit) return { rows: out, nextAfter: out[out.length - 1]?.key ?? null };
  // Fewer matches than asked: the whole window was read. Is there anything after it?
  const [boundary] = await db
    .select({ key })
    .from(responseEvents)
    .where(scope)
    .orderBy(asc(key))
    .offset(SCAN_WINDOW - 1)
    .limit(1);
  return { rows: out, nextAfter: boundary ? Number(boundary.key) : null };
}

/** Every matching event in batches (for streamed exports): never more than one batch in memory. */
export async function* trajectoryBatches(db: Db, filter: TTrajectoryFilter, batchSize = 1000, signal?: AbortSignal): AsyncGenerator<TTrajectoryRow[]> {
  let after: number | null = null;
  while (!signal?.aborted) {
    const page = await searchTrajectory(db, filter, { after, limit: batchSize });
    if (page.rows.length > 0) yield page.rows;
    if (page.nextAfter === null) return;
    after = page.nextAfter;
  }
}

/** The people who caused events in a trajectory (user ids), for the actor filter. */
export async function trajectoryActors(db: Db, filter: Pick<TTrajectoryFilter, "responseId" | "sessionId">): Promise<string[]> {
  const rows = await db
    .selectDistinct({ actor: responseEvents.actorUserId })
    .from(responseEvents)
    .where(and(scopeCondition(filter), isNotNull(responseEvents.actorUserId)))
    .limit(100);
  return rows.flatMap((r) => (r.actor ? [r.actor] : []));
}
