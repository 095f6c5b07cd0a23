import { and, eq, gte, lt, sql } from "drizzle-orm";
import type { Db } from "../client";
import { responses, users } from "../schema";

export type TUsageRow = { day: string; agent: string; userId: string; user: string; outputTokens: number; inputTokens: number; responses: number };

/**
 * Token usage summed per day, agent and user over [from, to), from `responses.usage`. Days are
 * calendar days in `timeZone` (an IANA name the caller validated; UTC by default).
 * `scopeUserId` limits a member to its own responses.
 */
export async function usageByDay(db: Db, input: { from: Date; to: Date; scopeUserId: string | null; agent?: string; userId?: string; timeZone?: string }): Promise<TUsageRow[]> {
  const zone = input.timeZone ?? "UTC";
  // Aggregate first (by the truncated timestamp), then format days and join names on the few groups.
  const day = sql<Date>`date_trunc('day', ${responses.createdAt}, ${zone})`.as("day");
  const totals = db
    .select({
      day,
      agent: responses.agent,
      userId: responses.userId,
      outputTokens: sql<number>`sum((${responses.usage}->>'outputTokens')::bigint)`.as("output_tokens"),
      inputTokens: sql<number>`sum((${responses.usage}->>'inputTokens')::bigint)`.as("input_tokens"),
      responses: sql<number>`count(*)`.as("responses"),
    })
    .from(responses)
    .where(
      and(
        gte(responses.createdAt, input.from),
        lt(responses.createdAt, input.to),
        input.scopeUserId ? eq(responses.userId, input.scopeUserId) : undefined,
        input.userId ? eq(responses.userId, input.userId) : undefined,
        input.agent ? eq(responses.agent, input.agent) : undefined,
      ),
    )
    .groupBy(sql`1`, responses.agent, responses.userId)
    .as("totals");
  const rows = await db
    .select({
      day: sql<string>`to_char(${totals.day} at time zone ${zone}, 'YYYY-MM-DD')`,
      agent: totals.agent,
      userId: totals.userId,
      user: users.name,
      outputTokens: sql<number>`coalesce(${totals.outputTokens}, 0)::float8`,
      inputTokens: sql<number>`coalesce(${totals.inputTokens}, 0)::float8`,
      responses: sql<number>`${totals.responses}::int`,
    })
    .from(totals)
    .innerJoin(users, eq(users.id, totals.userId))
    .orderBy(totals.day, totals.agent, users.name);
  return rows.map((r) => ({ ...r, outputTokens: Number(r.outputTokens), inputTokens: Number(r.inputTokens), responses: Number(r.responses) }));
}
