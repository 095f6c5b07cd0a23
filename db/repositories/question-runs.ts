/**
 * The runs questions are asked from: what the question services read of them, and how a question
 * held by a running tool call suspends and releases its run.
 */
import { and, eq } from "drizzle-orm";
import type { TPendingRef } from "../../server/core/pending";
import type { Db } from "../client";
import { responses } from "../schema";
import type { TResponseRow } from "./responses";

/** Who a response belongs to and its session (to check a question's creator), or null. */
export async function runOwnerAndSession(db: Db, responseId: string): Promise<{ userId: string; sessionId: string } | null> {
  const [row] = await db.select({ userId: responses.userId, sessionId: responses.sessionId }).from(responses).where(eq(responses.id, responseId));
  return row ?? null;
}

/** The agent and owner of a response (whose profile says who may steer it), or null. */
export async function runAgentAndOwner(db: Db, responseId: string): Promise<{ agent: string; userId: string } | null> {
  const [row] = await db.select({ agent: responses.agent, userId: responses.userId }).from(responses).where(eq(responses.id, responseId));
  return row ?? null;
}

/** A response's status (is the run still waiting?), or null. */
export async function runStatus(db: Db, responseId: string): Promise<TResponseRow["status"] | null> {
  const [row] = await db.select({ status: responses.status }).from(responses).where(eq(responses.id, responseId));
  return row?.status ?? null;
}

/** A response's status and the sequence its next frame gets, or null. */
export async function runStatusAndNextFrame(db: Db, responseId: string): Promise<{ status: TResponseRow["status"]; nextFrameSeq: number } | null> {
  const [row] = await db.select({ status: responses.status, nextFrameSeq: responses.nextFrameSeq }).from(responses).where(eq(responses.id, responseId));
  return row ?? null;
}

/**
 * Suspends an executing run on a question its running tool call holds (`pending.hold`): the run
 * turns `requires_action`. The run as updated, or null when it is no longer executing.
 */
export async function suspendOnHeldQuestion(tx: Db, responseId: string, pending: TPendingRef): Promise<TResponseRow | null> {
  const [row] = await tx
    .update(responses)
    .set({ status: "requires_action", pendingAction: pending })
    .where(and(eq(responses.id, responseId), eq(responses.status, "in_progress")))
    .returning();
  return row ?? null;
}

/** Gives a run suspended on a held question back to its tool call: executing again, waiting on nothing. */
export async function releaseHeldRun(tx: Db, responseId: string): Promise<void> {
  await tx.update(responses).set({ status: "in_progress", pendingAction: null }).where(eq(responses.id, responseId));
}
