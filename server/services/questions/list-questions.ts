import type { TPage } from "../../../db/repositories/keyset";
import type { TActor } from "../../core/actor";
import { readScope, type TReadScope } from "../../core/read-scope";
import type { TDeps, TRunDeps } from "../../host/deps";
import { expirePending } from "../../host/pending/kinds";
import { listQuestionRowsPage, type TQuestionListStatus, type TQuestionRecord, toRecords, visibleQuestion } from "../../../db/repositories/question-records";

/** `question.get`: one record the caller may see. */
export async function getQuestion(deps: TRunDeps, actor: TActor, id: string): Promise<TQuestionRecord> {
  let row = await visibleQuestion(deps.db, actor, id);
  // Past its expiry but not yet swept: expire it now, so a read never shows a dead question as pending.
  if (row.status === "pending" && row.expiresAt.getTime() <= deps.now().getTime()) {
    await expirePending(deps, deps.host, { type: "question", id: row.id });
    row = await visibleQuestion(deps.db, actor, id);
  }
  const [record] = await toRecords(deps.db, [row], actor.userId);
  return record as TQuestionRecord;
}

export type { TQuestionListStatus };

/** One page of the questions the scope may read (operators see the workspace), newest first. */
export async function listQuestionsPage(
  deps: Pick<TDeps, "db">,
  scope: TReadScope,
  options: { status?: TQuestionListStatus; cursor?: string | null; limit: number },
): Promise<TPage<TQuestionRecord>> {
  const page = await listQuestionRowsPage(deps.db, { status: options.status ?? "pending", userId: scope.userId, cursor: options.cursor, limit: options.limit });
  return { rows: await toRecords(deps.db, page.rows, scope.actor.userId), nextCursor: page.nextCursor };
}

/** `question.list`: pending questions visible to the caller (up to 200): the first page of {@link listQuestionsPage}. */
export async function listQuestions(deps: TDeps, actor: TActor, options: { status?: "pending" | "all" } = {}): Promise<TQuestionRecord[]> {
  return (await listQuestionsPage(deps, readScope(actor), { status: options.status ?? "pending", limit: 200 })).rows;
}
