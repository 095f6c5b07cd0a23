import { and, desc, eq, inArray } from "drizzle-orm";
import type { TSessionAccess } from "../../server/core/session-access";
import type { Db } from "../client";
import { agentSessions, auditLog, users } from "../schema";
import type { TSessionRow } from "./sessions";

/** The audit actions that change a session's access. */
export const ACCESS_GRANTED = "session.access.grant" as const;
export const ACCESS_REVOKED = "session.access.revoke" as const;

/** Who last granted Full access to each session, and when (from the admin trail). */
export type TAccessGrant = { byUserId: string | null; by: string | null; byEmail: string | null; at: string };

/** The latest Full access grant of each of `sessionIds` that has one. */
export async function latestAccessGrants(db: Db, sessionIds: string[]): Promise<Map<string, TAccessGrant>> {
  if (sessionIds.length === 0) return new Map();
  const rows = await db
    .select({ sessionId: auditLog.targetId, byUserId: auditLog.actorUserId, by: users.name, byEmail: users.email, at: auditLog.at })
    .from(auditLog)
    .leftJoin(users, eq(users.id, auditLog.actorUserId))
    .where(and(eq(auditLog.targetType, "session"), eq(auditLog.action, ACCESS_GRANTED), inArray(auditLog.targetId, sessionIds)))
    .orderBy(desc(auditLog.at), desc(auditLog.id));
  const grants = new Map<string, TAccessGrant>();
  for (const row of rows) if (!grants.has(row.sessionId)) grants.set(row.sessionId, { byUserId: row.byUserId, by: row.by, byEmail: row.byEmail, at: row.at.toISOString() });
  return grants;
}

/** Locks a session (`for update`) for a change of its access: the row, or null. */
export async function lockSessionForAccessChange(tx: Db, sessionId: string): Promise<TSessionRow | null> {
  const [row] = await tx.select().from(agentSessions).where(eq(agentSessions.id, sessionId)).for("update");
  return row ?? null;
}

/** Sets a session's access level. */
export async function writeSessionAccess(tx: Db, sessionId: string, access: TSessionAccess): Promise<void> {
  await tx.update(agentSessions).set({ access }).where(eq(agentSessions.id, sessionId));
}
