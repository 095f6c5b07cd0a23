import { and, eq, ne } from "drizzle-orm";
import type { Db } from "../client";
import { approvals, questions } from "../schema";

/**
 * What a tool call opens when it suspends its run: an approval of the operation it asks for, or
 * (see client-tools.ts) a client-tool request. Questions are opened through question-records.ts.
 */
export type TApprovalRow = typeof approvals.$inferSelect;

/** Opens the approval a run suspends on; returns it as stored. */
export async function openApproval(tx: Db, values: typeof approvals.$inferInsert): Promise<TApprovalRow | null> {
  const [row] = await tx.insert(approvals).values(values).returning();
  return row ?? null;
}

/** A question of the session still waiting for its answer (gateway questions aside): its id, or null. */
export async function pendingQuestionOfSession(tx: Db, sessionId: string): Promise<{ id: string } | null> {
  const [row] = await tx
    .select({ id: questions.id })
    .from(questions)
    .where(and(eq(questions.sessionId, sessionId), eq(questions.status, "pending"), ne(questions.kind, "gateway")));
  return row ?? null;
}
