import { and, eq, lte } from "drizzle-orm";
import { questions } from "../../../db/schema";
import type { TDeps } from "../../host/deps";
import { transact } from "../../host/transact";
import { toRecords } from "./records";
import { settleLinkedRun } from "./settle-linked-run";

/**
 * Expires a pending question whose time is up. A run waiting on it gets a clear
 * "nobody answered" result and goes on; it is not failed.
 */
export async function expireQuestion(deps: TDeps, questionId: string): Promise<boolean> {
  const expired = await transact(deps, async (tx, emit) => {
    const [row] = await tx
      .update(questions)
      .set({ status: "expired", resolvedAt: deps.now(), answeredVia: "system" })
      .where(and(eq(questions.id, questionId), eq(questions.status, "pending"), lte(questions.expiresAt, deps.now())))
      .returning();
    if (!row) return null;
    const [record] = await toRecords(tx, [row]);
    if (row.responseId) await emit(row.responseId, [{ type: "question.expired", data: { question: record }, frame: true, transport: "system" }]);
    const waitedSeconds = Math.round((row.expiresAt.getTime() - row.createdAt.getTime()) / 1000);
    const linked = await settleLinkedRun(
      tx,
      emit,
      row,
      { status: "expired", message: `Nobody answered within ${waitedSeconds} seconds. Continue without the answer, or ask again later.` },
      deps.now(),
    );
    return { row, linked };
  });
  if (!expired) return false;
  deps.bus.publishQuestion({ questionId, status: "expired" });
  deps.bus.publishInbox({ kind: "question", responseId: expired.row.responseId, id: questionId });
  if (expired.linked && expired.row.responseId) deps.bus.publishWake(expired.row.responseId, "resume");
  return true;
}

/** Expires every due pending question (called by the host's sweep). */
export async function expireDueQuestions(deps: TDeps): Promise<void> {
  const due = await deps.db
    .select({ id: questions.id })
    .from(questions)
    .where(and(eq(questions.status, "pending"), lte(questions.expiresAt, deps.now())))
    .limit(200);
  for (const { id } of due) await expireQuestion(deps, id);
}
