import { and, asc, count, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { approvalVotes, approvals, users } from "../../db/schema";
import type { TActor } from "../core/actor";
import { refused } from "../core/errors";
import type { TTransport } from "../core/vocabulary";

/** One approver's recorded vote, as the console shows it. */
export type TVote = { userId: string; name: string; email: string; decision: "approve" | "deny"; via: TTransport; at: string };

/**
 * Records one vote on a quorum approval inside the deciding transaction and returns how many
 * distinct approvers have approved so far (this vote included), or null when the approval is no
 * longer pending with this binding. The row lock serializes concurrent voters: without it, two
 * last votes could each count only themselves and neither would settle the approval.
 */
export async function castVote(
  tx: Db,
  approval: { id: string; bindingHash: string },
  actor: TActor,
  vote: { decision: "approve" | "deny"; via: TTransport },
): Promise<number | null> {
  const [locked] = await tx
    .select({ id: approvals.id })
    .from(approvals)
    .where(and(eq(approvals.id, approval.id), eq(approvals.status, "pending"), eq(approvals.bindingHash, approval.bindingHash)))
    .for("update");
  if (!locked) return null;
  const [cast] = await tx
    .insert(approvalVotes)
    .values({ approvalId: approval.id, userId: actor.userId, decision: vote.decision, via: vote.via })
    .onConflictDoNothing()
    .returning({ userId: approvalVotes.userId });
  if (!cast) throw refused("conflict", { code: "alreadyVoted" });
  const [tally] = await tx
    .select({ n: count() })
    .from(approvalVotes)
    .where(and(eq(approvalVotes.approvalId, approval.id), eq(approvalVotes.decision, "approve")));
  return tally?.n ?? 0;
}

/** The votes cast on these approvals, oldest first, by approval id (for the console). */
export async function votesOf(db: Db, approvalIds: readonly string[]): Promise<Map<string, TVote[]>> {
  const byApproval = new Map<string, TVote[]>();
  if (approvalIds.length === 0) return byApproval;
  const rows = await db
    .select({ approvalId: approvalVotes.approvalId, userId: approvalVotes.userId, name: users.name, email: users.email, decision: approvalVotes.decision, via: approvalVotes.via, at: approvalVotes.createdAt })
    .from(approvalVotes)
    .innerJoin(users, eq(users.id, approvalVotes.userId))
    .where(inArray(approvalVotes.approvalId, [...approvalIds]))
    .orderBy(asc(approvalVotes.createdAt));
  for (const { approvalId, at, ...vote } of rows) {
    const list = byApproval.get(approvalId) ?? [];
    list.push({ ...vote, at: at.toISOString() });
    byApproval.set(approvalId, list);
  }
  return byApproval;
}
