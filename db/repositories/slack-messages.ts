import { and, eq, inArray, isNull, ne } from "drizzle-orm";
import type { Db } from "../client";
import { approvals, slackMessages, users } from "../schema";

/** A Slack message posted with `chat.postMessage` about an approval (to be updated once it is settled). */
export type TSlackMessageRow = typeof slackMessages.$inferSelect;

/** How an approval was settled, with the decider's name and email (null while pending or when nobody decided). */
export type TSettledApproval = {
  id: string;
  responseId: string;
  status: string;
  decidedAt: Date | null;
  decidedVia: string | null;
  replyMessage: string | null;
  name: string | null;
  email: string | null;
};

const settledColumns = {
  id: approvals.id,
  responseId: approvals.responseId,
  status: approvals.status,
  decidedAt: approvals.decidedAt,
  decidedVia: approvals.decidedVia,
  replyMessage: approvals.replyMessage,
  name: users.name,
  email: users.email,
};

/** Claims a message's update with one conditional update: true for the one claim that set `updateId`. */
export async function claimSlackMessageUpdate(tx: Db, notificationId: string, updateId: string): Promise<boolean> {
  const [won] = await tx
    .update(slackMessages)
    .set({ updateId })
    .where(and(eq(slackMessages.notificationId, notificationId), isNull(slackMessages.updateId)))
    .returning({ id: slackMessages.notificationId });
  return won !== undefined;
}

/** The messages about the approvals `approvalIds` that are settled and whose update is not claimed yet, each with its approval. */
export async function unclaimedMessagesOfSettledApprovals(tx: Db, approvalIds: string[]): Promise<Array<{ message: TSlackMessageRow; approval: TSettledApproval }>> {
  return tx
    .select({ message: slackMessages, approval: settledColumns })
    .from(slackMessages)
    .innerJoin(approvals, eq(approvals.id, slackMessages.subjectId))
    .leftJoin(users, eq(users.id, approvals.decidedBy))
    .where(and(inArray(slackMessages.subjectId, approvalIds), ne(approvals.status, "pending"), isNull(slackMessages.updateId)));
}

/** Records (or re-records) a message posted for the notification `notificationId`. */
export async function upsertSlackMessage(
  tx: Db,
  message: { notificationId: string; subjectId: string; channel: string; slackChannel: string; ts: string; postedAt: Date },
): Promise<TSlackMessageRow | null> {
  const [row] = await tx
    .insert(slackMessages)
    .values({ notificationId: message.notificationId, subjectId: message.subjectId, channel: message.channel, slackChannel: message.slackChannel, ts: message.ts, postedAt: message.postedAt })
    .onConflictDoUpdate({ target: slackMessages.notificationId, set: { slackChannel: message.slackChannel, ts: message.ts, postedAt: message.postedAt } })
    .returning();
  return row ?? null;
}

/** An approval's status read under a share lock (`for share`): a transaction settling it waits, or is waited for. */
export async function approvalStatusForShare(tx: Db, approvalId: string): Promise<string | null> {
  const [locked] = await tx.select({ status: approvals.status }).from(approvals).where(eq(approvals.id, approvalId)).for("share");
  return locked?.status ?? null;
}

/** How an approval was settled (see {@link TSettledApproval}), or null for an unknown approval. */
export async function settledApproval(tx: Db, approvalId: string): Promise<TSettledApproval | null> {
  const [approval] = await tx.select(settledColumns).from(approvals).leftJoin(users, eq(users.id, approvals.decidedBy)).where(eq(approvals.id, approvalId));
  return approval ?? null;
}
