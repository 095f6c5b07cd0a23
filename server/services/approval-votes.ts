import type { Db } from "../../db/client";
import { countApprovingVotes, lockPendingForVote, recordVote, votesOnApprovals } from "../../db/repositories/approval-votes";
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
  if (!(await lockPendingForVote(tx, approval))) return null;
  const cast = await recordVote(tx, { approvalId: approval.id, userId: actor.userId, decision: vote.decision, via: vote.via });
  if (!cast) throw refused("conflict", { code: "alreadyVoted" });
  return countApprovingVotes(tx, approval.id);
}

/** The votes cast on these approvals, oldest first, by approval id (for the console). */
export async function votesOf(db: Db, approvalIds: readonly string[]): Promise<Map<string, TVote[]>> {
  const byApproval = new Map<string, TVote[]>();
  if (approvalIds.length === 0) return byApproval;
  const rows = await votesOnApprovals(db, approvalIds);
  for (const { approvalId, at, ...vote } of rows) {
    const list = byApproval.get(approvalId) ?? [];
    list.push({ ...vote, at: at.toISOString() });
    byApproval.set(approvalId, list);
  }
  return byApproval;
}
