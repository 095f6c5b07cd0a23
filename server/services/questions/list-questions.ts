import { and, desc, eq, ne } from "drizzle-orm";
import { beforeCursor, decodeCursor, exactTimestamp, type TPage, toPage } from "../../../db/repositories/keyset";
import { questions } from "../../../db/schema";
import type { TActor } from "../../core/actor";
import { readScope, type TReadScope } from "../../core/read-scope";
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

/** Which questions a page lists: the pending, the settled (answered, expired, cancelled), or all. */
export type TQuestionListStatus = "pending" | "settled" | "all";

/** One page of the questions the scope may read (operators see the workspace), newest first. */
export async function listQuestionsPage(
  deps: Pick<TDeps, "db">,
  scope: TReadScope,
  options: { status?: TQuestionListStatus; cursor?: string | null; limit: number },
): Promise<TPage<TQuestionRecord>> {
  const status = options.status ?? "pending";
  const cursor = decodeCursor(options.cursor);
  const rows = await deps.db
    .select({ row: questions, cursorAt: exactTimestamp(questions.createdAt) })
    .from(questions)
    .where(
      and(
        status === "pending" ? eq(questions.status, "pending") : status === "settled" ? ne(questions.status, "pending") : undefined,
        scope.userId ? eq(questions.userId, scope.userId) : undefined,
        cursor ? beforeCursor(questions.createdAt, questions.id, cursor) : undefined,
      ),
    )
    .orderBy(desc(questions.createdAt), desc(questions.id))
    .limit(options.limit + 1);
  const page = toPage(
    rows.map((r) => ({ id: r.row.id, cursorAt: r.cursorAt, row: r.row })),
    options.limit,
  );
  return { rows: await toRecords(deps.db, page.rows.map((r) => r.row)), nextCursor: page.nextCursor };
}

/** `question.list`: pending questions visible to the caller (up to 200): the first page of {@link listQuestionsPage}. */
export async function listQuestions(deps: TDeps, actor: TActor, options: { status?: "pending" | "all" } = {}): Promise<TQuestionRecord[]> {
  return (await listQuestionsPage(deps, readScope(actor), { status: options.status ?? "pending", limit: 200 })).rows;
}
