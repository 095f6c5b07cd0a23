import { and, desc, eq } from "drizzle-orm";
import { questions } from "../../../db/schema";
import type { TActor } from "../../core/actor";
import { READ_ALL_ROLES } from "../../core/vocabulary";
import type { TDeps, TRunDeps } from "../../host/deps";
import { expirePending } from "../../host/pending/kinds";
import { type TQuestionRecord, toRecords, visibleQuestion } from "../../../db/repositories/question-records";

/** `question.get`: one record the caller may see. */
export async function getQuestion(deps: TRunDeps, actor: TActor, id: string): Promise<TQuestionRecord> {
  let row = await visibleQuestion(deps.db, actor, id);
  // Past its expiry but not yet swept: expire it now, so a read never shows a dead question as pending.
  if (row.status === "pending" && row.expiresAt.getTime() <= deps.now().getTime()) {
    await expirePending(deps, deps.host, { type: "question", id });
    row = await visibleQuestion(deps.db, actor, id);
  }
  const [record] = await toRecords(deps.db, [row]);
  return record as TQuestionRecord;
}

/** `question.list`: pending questions visible to the caller (operators see the workspace). */
export async function listQuestions(deps: TDeps, actor: TActor, options: { status?: "pending" | "all" } = {}): Promise<TQuestionRecord[]> {
  const seeAll = READ_ALL_ROLES.includes(actor.role);
  const statusFilter = options.status === "all" ? undefined : eq(questions.status, "pending");
  const rows = await deps.db
    .select()
    .from(questions)
    .where(and(statusFilter, seeAll ? undefined : eq(questions.userId, actor.userId)))
    .orderBy(desc(questions.createdAt))
    .limit(200);
  return toRecords(deps.db, rows);
}
