import { and, desc, eq, gte, inArray, lt, or, type SQL, sql } from "drizzle-orm";
import type { TResponseStatus } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { agentSessions, responses, users } from "../schema";
import { beforeCursor, containsPattern, decodeCursor, exactTimestamp, type TPage, toPage } from "./keyset";
import { latestAccessGrants, type TAccessGrant } from "./session-access";
import type { TSessionState } from "../../server/core/vocabulary";

/** Filters shared by the response and session lists; `scopeUserId` limits a member to its own. */
export type TListFilter = {
  scopeUserId: string | null;
  agent?: string;
  userId?: string;
  from?: Date;
  to?: Date;
  q?: string;
  cursor?: string | null;
  limit: number;
};

export type TResponseListRow = {
  id: string;
  sessionId: string;
  agent: string;
  status: TResponseStatus;
  userId: string;
  user: string;
  /** The owner's email, shown beside the name. */
  userEmail: string;
  outputTokens: number;
  createdAt: string;
  completedAt: string | null;
  cursorAt: string;
};

/** A page of responses, newest first, filtered by status, agent, user, time range and text. */
export async function listResponsesPage(db: Db, filter: TListFilter & { statuses?: readonly TResponseStatus[] }): Promise<TPage<TResponseListRow>> {
  const where: (SQL | undefined)[] = [
    filter.scopeUserId ? eq(responses.userId, filter.scopeUserId) : undefined,
    filter.userId ? eq(responses.userId, filter.userId) : undefined,
    filter.agent ? eq(responses.agent, filter.agent) : undefined,
    filter.statuses && filter.statuses.length > 0 ? inArray(responses.status, [...filter.statuses]) : undefined,
    filter.from ? gte(responses.createdAt, filter.from) : undefined,
    filter.to ? lt(responses.createdAt, filter.to) : undefined,
  ];
  if (filter.q) {
    // An exact id (response or session) or text anywhere in the input.
    where.push(or(eq(responses.id, filter.q), eq(responses.sessionId, filter.q), sql`${responses.input}::text ilike ${containsPattern(filter.q)}`));
  }
  const cursor = decodeCursor(filter.cursor);
  if (cursor) where.push(beforeCursor(responses.createdAt, responses.id, cursor));
  const rows = await db
    .select({
      id: responses.id,
      sessionId: responses.sessionId,
      agent: responses.agent,
      status: responses.status,
      userId: responses.userId,
      user: users.name,
      userEmail: users.email,
      outputTokens: sql<number>`coalesce((${responses.usage}->>'outputTokens')::bigint, 0)::float8`,
      createdAt: responses.createdAt,
      completedAt: responses.completedAt,
      cursorAt: exactTimestamp(responses.createdAt),
    })
    .from(responses)
    .innerJoin(users, eq(users.id, responses.userId))
    .where(and(...where))
    .orderBy(desc(responses.createdAt), desc(responses.id))
    .limit(filter.limit + 1);
  return toPage(
    rows.map((r) => ({ ...r, outputTokens: Number(r.outputTokens), createdAt: r.createdAt.toISOString(), completedAt: r.completedAt?.toISOString() ?? null })),
    filter.limit,
  );
}

export type TSessionListRow = {
  id: string;
  agent: string;
  userId: string;
  user: string;
  userEmail: string;
  access: string;
  /** Who granted the Full access in force, and when; null at default access. */
  fullAccessGrant: TAccessGrant | null;
  createdAt: string;
  responseCount: number;
  activeCount: number;
  lastStatus: TResponseStatus | null;
  lastActivityAt: string | null;
  cursorAt: string;
};

/** A page of sessions, newest first; `state` keeps those with (or without) an unsettled response. */
export async function listSessionsPage(db: Db, filter: TListFilter & { state?: TSessionState }): Promise<TPage<TSessionListRow>> {
  const active = sql`exists (select 1 from ${responses} r where r.session_id = ${agentSessions.id} and r.status in ('in_progress', 'requires_action'))`;
  const where: (SQL | undefined)[] = [
    filter.scopeUserId ? eq(agentSessions.userId, filter.scopeUserId) : undefined,
    filter.userId ? eq(agentSessions.userId, filter.userId) : undefined,
    filter.agent ? eq(agentSessions.agent, filter.agent) : undefined,
    filter.from ? gte(agentSessions.createdAt, filter.from) : undefined,
    filter.to ? lt(agentSessions.createdAt, filter.to) : undefined,
    filter.q ? eq(agentSessions.id, filter.q) : undefined,
    filter.state === "active" ? active : filter.state === "idle" ? sql`not ${active}` : undefined,
  ];
  const cursor = decodeCursor(filter.cursor);
  if (cursor) where.push(beforeCursor(agentSessions.createdAt, agentSessions.id, cursor));
  const rows = await db
    .select({
      id: agentSessions.id,
      agent: agentSessions.agent,
      userId: agentSessions.userId,
      user: users.name,
      userEmail: users.email,
      access: agentSessions.access,
      createdAt: agentSessions.createdAt,
      cursorAt: exactTimestamp(agentSessions.createdAt),
    })
    .from(agentSessions)
    .innerJoin(users, eq(users.id, agentSessions.userId))
    .where(and(...where))
    .orderBy(desc(agentSessions.createdAt), desc(agentSessions.id))
    .limit(filter.limit + 1);
  const page = toPage(rows, filter.limit);
  const stats = await sessionStats(
    db,
    page.rows.map((r) => r.id),
  );
  const grants = await latestAccessGrants(
    db,
    page.rows.filter((r) => r.access === "full").map((r) => r.id),
  );
  return {
    nextCursor: page.nextCursor,
    rows: page.rows.map((r) => {
      const s = stats.get(r.id);
      return {
        ...r,
        fullAccessGrant: r.access === "full" ? (grants.get(r.id) ?? null) : null,
        createdAt: r.createdAt.toISOString(),
        responseCount: s?.count ?? 0,
        activeCount: s?.active ?? 0,
        lastStatus: s?.lastStatus ?? null,
        lastActivityAt: s?.lastAt ?? null,
      };
    }),
  };
}

/** Response counts and the latest response of each session (one grouped query per page). */
async function sessionStats(db: Db, ids: string[]): Promise<Map<string, { count: number; active: number; lastStatus: TResponseStatus | null; lastAt: string | null }>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({
      sessionId: responses.sessionId,
      count: sql<number>`count(*)::int`,
      active: sql<number>`(count(*) filter (where ${responses.status} in ('in_progress', 'requires_action')))::int`,
      lastStatus: sql<TResponseStatus | null>`(array_agg(${responses.status}::text order by ${responses.createdAt} desc))[1]`,
      lastAt: sql<string | null>`max(${responses.updatedAt})`,
    })
    .from(responses)
    .where(inArray(responses.sessionId, ids))
    .groupBy(responses.sessionId);
  return new Map(rows.map((r) => [r.sessionId, { count: Number(r.count), active: Number(r.active), lastStatus: r.lastStatus, lastAt: r.lastAt ? new Date(r.lastAt).toISOString() : null }]));
}

/** One session with its owner's name and email, or null. */
export async function getSession(db: Db, sessionId: string) {
  const [row] = await db
    .select({ session: agentSessions, user: users.name, userEmail: users.email })
    .from(agentSessions)
    .innerJoin(users, eq(users.id, agentSessions.userId))
    .where(eq(agentSessions.id, sessionId));
  return row ?? null;
}

/** The responses of one session, newest first (at most `limit`). */
export async function sessionResponses(db: Db, sessionId: string, limit = 200) {
  return db
    .select({ id: responses.id, status: responses.status, usage: responses.usage, createdAt: responses.createdAt, completedAt: responses.completedAt })
    .from(responses)
    .where(eq(responses.sessionId, sessionId))
    .orderBy(desc(responses.createdAt))
    .limit(limit);
}

/** The newest 100 responses (of `userId` only, when given) with their owner's name and email. */
export async function recentResponsesWithOwner(db: Db, userId: string | null) {
  return db
    .select({ id: responses.id, sessionId: responses.sessionId, agent: responses.agent, status: responses.status, user: users.name, userEmail: users.email, createdAt: responses.createdAt })
    .from(responses)
    .innerJoin(users, eq(users.id, responses.userId))
    .where(userId === null ? undefined : eq(responses.userId, userId))
    .orderBy(desc(responses.createdAt))
    .limit(100);
}

/** The owner and token usage of a session's newest 1,000 responses, newest first. */
export async function sessionResponseUsage(db: Db, sessionId: string) {
  return db
    .select({ id: responses.id, userId: responses.userId, usage: responses.usage, createdAt: responses.createdAt })
    .from(responses)
    .where(eq(responses.sessionId, sessionId))
    .orderBy(desc(responses.createdAt))
    .limit(1000);
}
