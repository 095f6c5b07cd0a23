import { eq, inArray } from "drizzle-orm";
import { canRead, type TActor } from "../../server/core/actor";
import { newId } from "../../server/core/ids";
import { QuestionError } from "../../server/core/questions/errors";
import type { TQuestionRecord } from "../../server/core/questions/record";
import type { TQuestion, TQuestionKind } from "../../server/core/questions/schema";
import type { Db } from "../client";
import { questions, users } from "../schema";
import type { TCreatorAuthority } from "../schema/questions";

export type TQuestionRow = typeof questions.$inferSelect;

/** The public shape of a question record: never a secret value, never a resolution receipt. */
export type { TQuestionRecord };

/** Maps rows to records, resolving user names and emails in one query. */
export async function toRecords(db: Db, rows: TQuestionRow[]): Promise<TQuestionRecord[]> {
  const ids = [...new Set(rows.flatMap((r) => [r.userId, r.answeredBy ?? r.userId]))];
  const people = new Map(
    ids.length === 0 ? [] : (await db.select({ id: users.id, name: users.name, email: users.email }).from(users).where(inArray(users.id, ids))).map((u) => [u.id, u]),
  );
  const person = (userId: string) => ({ userId, name: people.get(userId)?.name ?? null, email: people.get(userId)?.email ?? null });
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    status: r.status,
    questions: r.questions,
    answers: r.answers,
    sessionId: r.sessionId,
    responseId: r.responseId,
    requester: person(r.userId),
    answeredBy: r.answeredBy ? person(r.answeredBy) : null,
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
  if (!row || !canRead(actor, row.userId)) throw new QuestionError("QUESTION_NOT_FOUND", { code: "questionNotFound", params: { id } });
  return row;
}

/**
 * Registers a question inside the caller's transaction (so a run can suspend on it atomically).
 * The creator's authority (user, session, run, tool call) is captured with it. Returns null when
 * a run question of the same session is already pending (at most one per session), also when a
 * concurrent transaction inserted it first.
 */
export async function insertQuestion(
  tx: Db,
  now: Date,
  input: { id?: string; kind: TQuestionKind; questions: TQuestion[]; creator: TCreatorAuthority; timeoutMs: number },
): Promise<typeof questions.$inferSelect | null> {
  const id = input.id ?? newId("ask");
  const inUse = () => new QuestionError("QUESTION_ID_IN_USE", `A question with id ${id} already exists.`);
  const [taken] = await tx.select({ id: questions.id }).from(questions).where(eq(questions.id, id));
  if (taken) throw inUse();
  // A concurrent insert may commit between the check and this insert (same id, or another pending
  // question of the session): the conflict then leaves no row and changes nothing. A unique
  // violation would abort the caller's transaction and surface as a store failure or a failed run.
  const [row] = await tx
    .insert(questions)
    .values({
      id,
      kind: input.kind,
      userId: input.creator.userId,
      sessionId: input.creator.sessionId,
      responseId: input.creator.responseId,
      callId: input.creator.callId,
      creator: input.creator,
      questions: input.questions,
      expiresAt: new Date(now.getTime() + input.timeoutMs),
    })
    .onConflictDoNothing()
    .returning();
  if (row) return row;
  const [again] = await tx.select({ id: questions.id }).from(questions).where(eq(questions.id, id));
  if (again) throw inUse();
  return null;
}
