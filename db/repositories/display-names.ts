import { and, asc, eq, exists, inArray, isNull, ne, or, type SQL, sql } from "drizzle-orm";
import { displayNameKey } from "../../server/core/display-name";
import type { Db } from "../client";
import { agentSessions, approvals, approvalVotes, clientToolRequests, grants, questions, responseEvents, users } from "../schema";

/** The unique index that keeps two users who are not deleted from sharing a display name. */
export const NAME_KEY_INDEX = "users_name_key_idx";

/** The unique constraint on users' emails. */
const EMAIL_KEY = "users_email_unique";

/** Did this error come from the unique index or constraint `name` (a concurrent writer took the value first)? */
function isUniqueViolationOf(error: unknown, name: string): boolean {
  for (let e = error as { code?: unknown; constraint?: unknown; constraint_name?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (e.code === "23505" && (e.constraint_name === name || e.constraint === name)) return true;
  }
  return false;
}

/** Did this error come from the unique index on display names (a concurrent writer took the name first)? */
export const isNameKeyViolation = (error: unknown): boolean => isUniqueViolationOf(error, NAME_KEY_INDEX);

/** Did this error come from the unique email of users (a concurrent writer added the same email first)? */
export const isEmailViolation = (error: unknown): boolean => isUniqueViolationOf(error, EMAIL_KEY);

/**
 * Another user (not deleted, not `exceptUserId`) whose display name is the same as `name` by
 * {@link displayNameKey}, or null. Users whose key was never written (they shared a name when keys
 * were introduced) are compared by their name's key computed here.
 */
export async function nameHolder(db: Db, name: string, exceptUserId?: string): Promise<{ id: string; name: string } | null> {
  const key = displayNameKey(name);
  const rows = await db
    .select({ id: users.id, name: users.name })
    .from(users)
    .where(and(isNull(users.deletedAt), or(eq(users.nameKey, key), isNull(users.nameKey)), exceptUserId ? ne(users.id, exceptUserId) : undefined));
  return rows.find((r) => displayNameKey(r.name) === key) ?? null;
}

/**
 * Writes the key of every user that has none (the users that existed before keys did), oldest
 * first, one statement each: the first user of a name takes it; a later user of the same name
 * keeps its name and no key, and is returned so the server can say so (an admin renames it).
 * Idempotent, and safe when replicas run it together (a key one of them wrote first is a miss).
 */
export async function backfillNameKeys(db: Db): Promise<Array<{ id: string; name: string }>> {
  const missing = await db
    .select({ id: users.id, name: users.name })
    .from(users)
    .where(and(isNull(users.nameKey), isNull(users.deletedAt)))
    .orderBy(asc(users.createdAt), asc(users.id));
  const shared: Array<{ id: string; name: string }> = [];
  for (const user of missing) {
    const key = displayNameKey(user.name);
    try {
      if (key !== "") {
        await db
          .update(users)
          .set({ nameKey: key })
          .where(and(eq(users.id, user.id), isNull(users.nameKey)));
        continue;
      }
    } catch (error) {
      if (!isNameKeyViolation(error)) throw error;
    }
    shared.push(user);
  }
  return shared;
}

/** The name and email of each of `ids` that is a user (no query for none). */
export async function peopleByIds(db: Db, ids: readonly string[]): Promise<Array<{ id: string; name: string; email: string }>> {
  if (ids.length === 0) return [];
  return db.select({ id: users.id, name: users.name, email: users.email }).from(users).where(inArray(users.id, [...ids]));
}

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
 * The name and email of each of `ids` that is a user, all of them (`memberId` null) or only
 * those the member `memberId` may know by name (see {@link knownToMember}).
 */
export async function namesKnownTo(db: Db, memberId: string | null, ids: readonly string[]): Promise<Array<{ id: string; name: string; email: string }>> {
  const visible = memberId === null ? undefined : knownToMember(db, memberId);
  return db
    .select({ id: users.id, name: users.name, email: users.email })
    .from(users)
    .where(and(inArray(users.id, [...ids]), visible));
}

/** Writes a user's new display name and its key unless the user was deleted meanwhile: false then. */
export async function writeDisplayName(tx: Db, userId: string, name: string, now: Date): Promise<boolean> {
  const rows = await tx
    .update(users)
    .set({ name, nameKey: displayNameKey(name), updatedAt: now })
    .where(and(eq(users.id, userId), isNull(users.deletedAt)))
    .returning({ id: users.id });
  return rows.length > 0;
}
