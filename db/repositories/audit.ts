import { and, desc, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { type TAdminAction, type TAdminWho, trailDetail } from "../../server/core/admin-trail";
import { newId } from "../../server/core/ids";
import type { Db } from "../client";
import { auditLog, users } from "../schema";
import { beforeCursor, exactTimestamp, type TKeysetCursor } from "./keyset";

export type TAdminEventInput = { action: TAdminAction; targetType: string; targetId: string; detail?: Record<string, unknown> };

/**
 * Appends one row to the admin trail (`audit_log`): who (the acting user, or the CLI's OS user),
 * what (action, target, a small detail without secrets), when, and from where (channel, client
 * address). Every administrative path calls this with the transaction that makes the change, so
 * the record and the change commit together or not at all. Rows are never updated or deleted (a
 * trigger refuses it).
 */
export async function recordAdminEvent(tx: Db, who: TAdminWho, event: TAdminEventInput): Promise<void> {
  await tx.insert(auditLog).values({
    id: newId("audit"),
    actorUserId: who.actor?.userId ?? null,
    action: event.action,
    targetType: event.targetType,
    targetId: event.targetId,
    data: trailDetail(event.detail ?? {}),
    channel: who.origin.channel,
    osUser: who.origin.channel === "cli" ? (who.origin.osUser ?? null) : null,
    clientIp: who.origin.clientIp,
  });
}

/** Filters of the admin trail: an actor (a user id, or `cli` / `system`), an action, a time range [from, to). */
export type TAdminTrailFilter = { actor?: string; action?: string; from?: Date; to?: Date };

export type TAdminTrailRow = {
  id: string;
  at: string;
  cursorAt: string;
  actorUserId: string | null;
  actorName: string | null;
  /** The actor's email, shown beside the name. */
  actorEmail: string | null;
  osUser: string | null;
  channel: string;
  clientIp: string | null;
  action: string;
  targetType: string;
  targetId: string;
  /** The person the action concerns, as named now with their email: the target user, or the owner of a target API key (null otherwise). */
  targetName: string | null;
  targetEmail: string | null;
  detail: Record<string, unknown>;
};

/** The person a trail row concerns: its target user, or the user an API key action names in its detail. */
const targetUser = alias(users, "target_user");
const targetUserId = sql`case when ${auditLog.targetType} = 'user' then ${auditLog.targetId} else ${auditLog.data}->>'userId' end`;

function conditions(filter: TAdminTrailFilter): SQL[] {
  const out: SQL[] = [];
  if (filter.actor === "cli" || filter.actor === "system" || filter.actor === "sso") out.push(eq(auditLog.channel, filter.actor));
  else if (filter.actor) out.push(eq(auditLog.actorUserId, filter.actor));
  if (filter.action) out.push(eq(auditLog.action, filter.action));
  if (filter.from) out.push(gte(auditLog.at, filter.from));
  if (filter.to) out.push(lt(auditLog.at, filter.to));
  return out;
}

/** Up to `limit` trail rows after the cursor, newest first (keyset on (at, id)). */
export async function adminTrailRows(db: Db, filter: TAdminTrailFilter, cursor: TKeysetCursor | null, limit: number): Promise<TAdminTrailRow[]> {
  const rows = await db
    .select({
      id: auditLog.id,
      at: auditLog.at,
      cursorAt: exactTimestamp(auditLog.at),
      actorUserId: auditLog.actorUserId,
      actorName: users.name,
      actorEmail: users.email,
      osUser: auditLog.osUser,
      channel: auditLog.channel,
      clientIp: auditLog.clientIp,
      action: auditLog.action,
      targetType: auditLog.targetType,
      targetId: auditLog.targetId,
      targetName: targetUser.name,
      targetEmail: targetUser.email,
      detail: auditLog.data,
    })
    .from(auditLog)
    .leftJoin(users, eq(users.id, auditLog.actorUserId))
    .leftJoin(targetUser, eq(targetUser.id, targetUserId))
    .where(and(...conditions(filter), cursor ? beforeCursor(auditLog.at, auditLog.id, cursor) : undefined))
    .orderBy(desc(auditLog.at), desc(auditLog.id))
    .limit(limit);
  return rows.map((r) => ({ ...r, at: r.at.toISOString() }));
}

/** The people who appear as actors in the trail (for the actor filter), with their emails. */
export async function adminTrailActors(db: Db): Promise<Array<{ id: string; name: string; email: string }>> {
  return db
    .selectDistinct({ id: users.id, name: users.name, email: users.email })
    .from(auditLog)
    .innerJoin(users, eq(users.id, auditLog.actorUserId))
    .orderBy(users.name)
    .limit(500);
}
