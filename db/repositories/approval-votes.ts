import { and, asc, count, eq, inArray } from "drizzle-orm";
import type { TTransport } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { approvalVotes, approvals, users } from "../schema";

/**
 * Locks a quorum approval while it is pending with this binding, so concurrent voters count one
 * after the other: false when it is no longer pending with this binding.
 */
export async function lockPendingForVote(tx: Db, approval: { id: string; bindingHash: string }): Promise<boolean> {
  const [locked] = await tx
    .select({ id: approvals.id })
    .from(approvals)
    .where(and(eq(approvals.id, approval.id), eq(approvals.status, "pending"), eq(approvals.bindingHash, approval.bindingHash)))
    .for("update");
  return locked !== undefined;
}

/** Records one approver's vote on an approval: false when this approver had voted already (nothing changes). */
export async function recordVote(tx: Db, vote: { approvalId: string; userId: string; decision: "approve" | "deny"; via: TTransport }): Promise<boolean> {
  const [cast] = await tx
    .insert(approvalVotes)
    .values({ approvalId: vote.approvalId, userId: vote.userId, decision: vote.decision, via: vote.via })
    .onConflictDoNothing()
    .returning({ userId: approvalVotes.userId });
  return cast !== undefined;
}

/** How many distinct approvers have approved this approval so far. */
export async function countApprovingVotes(tx: Db, approvalId: string): Promise<number> {
  const [tally] = await tx
    .select({ n: count() })
    .from(approvalVotes)
    .where(and(eq(approvalVotes.approvalId, approvalId), eq(approvalVotes.decision, "approve")));
  return tally?.n ?? 0;
}

/** The votes cast on these approvals with each voter's name and email, oldest first. */
export async function votesOnApprovals(db: Db, approvalIds: readonly string[]) {
  return db
    .select({ approvalId: approvalVotes.approvalId, userId: approvalVotes.userId, name: users.name, email: users.email, decision: approvalVotes.decision, via: approvalVotes.via, at: approvalVotes.createdAt })
    .from(approvalVotes)
    .innerJoin(users, eq(users.id, approvalVotes.userId))
    .where(inArray(approvalVotes.approvalId, [...approvalIds]))
    .orderBy(asc(approvalVotes.createdAt));
}
