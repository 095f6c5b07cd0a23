import { and, asc, eq, gt, inArray, like, lte, or, sql } from "drizzle-orm";
import type { Db } from "../client";
import { responseEvents, responses } from "../schema";

/** Trajectory events that change what is waiting (the console's activity feed). */
const ACTIVITY_TYPES = ["response.created", "response.completed", "response.cancelled", "review.verdict"];
const ACTIVITY_PREFIXES = ["approval.%", "question.%", "client_tool.%", "steer.%", "device.%"];

const isActivity = or(inArray(responseEvents.type, ACTIVITY_TYPES), ...ACTIVITY_PREFIXES.map((p) => like(responseEvents.type, p)));

export type TActivityRow = {
  id: number;
  type: string;
  responseId: string;
  sessionId: string;
  userId: string;
  agent: string;
  actorUserId: string | null;
  transport: string | null;
  status: string | null;
  createdAt: string;
};

/** The highest trajectory event id (0 when there is none). */
export async function latestEventId(db: Db): Promise<number> {
  const [row] = await db.select({ id: sql<string | null>`max(${responseEvents.id})` }).from(responseEvents);
  return Number(row?.id ?? 0);
}

/** Activity events with `after < id <= upTo`, oldest first, visible to `userId` (null: everyone). */
export async function activityBetween(db: Db, input: { after: number; upTo: number; userId: string | null; limit: number }): Promise<TActivityRow[]> {
  const rows = await db
    .select({
      id: responseEvents.id,
      type: responseEvents.type,
      responseId: responseEvents.responseId,
      sessionId: responseEvents.sessionId,
      userId: responses.userId,
      agent: responses.agent,
      actorUserId: responseEvents.actorUserId,
      transport: responseEvents.transport,
      status: sql<string | null>`${responseEvents.data}->>'status'`,
      createdAt: responseEvents.createdAt,
    })
    .from(responseEvents)
    .innerJoin(responses, eq(responses.id, responseEvents.responseId))
    .where(and(gt(responseEvents.id, input.after), lte(responseEvents.id, input.upTo), isActivity, input.userId ? eq(responses.userId, input.userId) : undefined))
    .orderBy(asc(responseEvents.id))
    .limit(input.limit);
  return rows.map((r) => ({ ...r, id: Number(r.id), createdAt: r.createdAt.toISOString() }));
}
