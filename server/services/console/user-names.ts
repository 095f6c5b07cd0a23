import { and, eq, exists, inArray, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { agentSessions, approvals, approvalVotes, clientToolRequests, grants, questions, responseEvents, users } from "../../../db/schema";
import type { TActor } from "../../core/actor";
import { READ_ALL_ROLES } from "../../core/vocabulary";

/**
 * Who a member may know by name: itself, and whoever acted on its own objects (decided or voted
 * on its approvals, answered its questions or client tools, granted or revoked its grants, or left
 * an event in its sessions' trajectories). Anyone else's id stays an id, so a member cannot map
 * arbitrary user ids to names.
 */
function knownToMember(db: Db, memberId: string): SQL {
  const one = { one: sql`1` };
  return or(
    eq(users.id, memberId),
    exists(
      db
        .select(one)
        .from(responseEvents)
        .innerJoin(agentSessions, eq(agentSessions.id, responseEvents.sessionId))
        .where(and(eq(agentSessions.userId, memberId), eq(responseEvents.actorUserId, users.id))),
    ),
    exists(db.select(one).from(approvals).where(and(eq(approvals.userId, memberId), eq(approvals.decidedBy, users.id)))),
    exists(
      db
        .select(one)
        .from(approvalVotes)
        .innerJoin(approvals, eq(approvals.id, approvalVotes.approvalId))
        .where(and(eq(approvals.userId, memberId), eq(approvalVotes.userId, users.id))),
    ),
    exists(db.select(one).from(questions).where(and(eq(questions.userId, memberId), eq(questions.answeredBy, users.id)))),
    exists(db.select(one).from(clientToolRequests).where(and(eq(clientToolRequests.userId, memberId), eq(clientToolRequests.submittedBy, users.id)))),
    exists(db.select(one).from(grants).where(and(eq(grants.userId, memberId), or(eq(grants.createdBy, users.id), eq(grants.revokedBy, users.id))))),
  ) as SQL;
}

/**
 * Display names for user ids shown in the console (deciders, trajectory actors), each with the
 * email the console shows beside it: whoever may know a person's name knows their email too, so a
 * display name can never pass for someone else's. Operators, admins and auditors see everyone's; a
 * member only those it legitimately knows (others are left out).
 */
export async function userNames(db: Db, actor: TActor, ids: readonly string[]): Promise<Record<string, { name: string; email: string }>> {
  if (ids.length === 0) return {};
  const visible = READ_ALL_ROLES.includes(actor.role) ? undefined : knownToMember(db, actor.userId);
  const rows = await db
    .select({ id: users.id, name: users.name, email: users.email })
    .from(users)
    .where(and(inArray(users.id, [...ids]), visible));
  return Object.fromEntries(rows.map((r) => [r.id, { name: r.name, email: r.email }]));
}
