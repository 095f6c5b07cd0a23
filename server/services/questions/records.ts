import { eq, inArray } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { questions, users } from "../../../db/schema";
import { type TActor, canRead } from "../../core/actor";
import { QuestionError } from "../../core/questions/errors";

export type TQuestionRow = typeof questions.$inferSelect;

/** The public shape of a question record: never a secret value, never a resolution receipt. */
export type TQuestionRecord = {
  id: string;
  kind: TQuestionRow["kind"];
  status: TQuestionRow["status"];
  questions: TQuestionRow["questions"];
  answers: TQuestionRow["answers"];
  sessionId: string | null;
  responseId: string | null;
  requester: { userId: string; name: string | null };
  answeredBy: { userId: string; name: string | null } | null;
  answeredVia: TQuestionRow["answeredVia"];
  answeredAt: string | null;
  expiresAt: string;
  expiresAtMs: number;
  createdAt: string;
};

/** Maps rows to records, resolving user names in one query. */
export async function toRecords(db: Db, rows: TQuestionRow[]): Promise<TQuestionRecord[]> {
  const ids = [...new Set(rows.flatMap((r) => [r.userId, r.answeredBy ?? r.userId]))];
  const names = new Map(
    ids.length === 0 ? [] : (await db.select({ id: users.id, name: users.name }).from(users).where(inArray(users.id, ids))).map((u) => [u.id, u.name]),
  );
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    status: r.status,
    questions: r.questions,
    answers: r.answers,
    sessionId: r.sessionId,
    responseId: r.responseId,
    requester: { userId: r.userId, name: names.get(r.userId) ?? null },
    answeredBy: r.answeredBy ? { userId: r.answeredBy, name: names.get(r.answeredBy) ?? null } : null,
    answeredVia: r.answeredVia,
    answeredAt: r.resolvedAt?.toISOString() ?? null,
    expiresAt: r.expiresAt.toISOString(),
    expiresAtMs: r.expiresAt.getTime(),
    createdAt: r.createdAt.toISOString(),
  }));
}

/** Loads a question the actor may see; others' questions look missing. */
export async function visibleQuestion(db: Db, actor: TActor, id: string): Promise<TQuestionRow> {
  const [row] = await db.select().from(questions).where(eq(questions.id, id));
  if (!row || !canRead(actor, row.userId)) throw new QuestionError("QUESTION_NOT_FOUND", `No question with id ${id} was found.`);
  return row;
}
