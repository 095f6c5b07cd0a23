import { and, desc, eq, lte, ne, or, type SQL, sql } from "drizzle-orm";
import { canRead, type TActor } from "../../server/core/actor";
import { newId } from "../../server/core/ids";
import { QuestionError } from "../../server/core/questions/errors";
import type { TQuestionRecord } from "../../server/core/questions/record";
import type { TAnswers, TQuestion, TQuestionKind } from "../../server/core/questions/schema";
import type { TTransport } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { questions, responses, secretValues } from "../schema";
import type { TCreatorAuthority } from "../schema/questions";
import { peopleByIds } from "./display-names";
import { beforeCursor, decodeCursor, exactTimestamp, type TPage, toPage } from "./keyset";

export type TQuestionRow = typeof questions.$inferSelect;

/** The public shape of a question record: never a secret value, never a resolution receipt. */
export type { TQuestionRecord };

/**
 * Maps rows to records, resolving user names and emails in one query. `viewerId`: whose view the
 * records are. A creator sees its own question under the id it chose; everyone else sees the
 * primary key (they differ only when another creator's question had that id first).
 */
export async function toRecords(db: Db, rows: TQuestionRow[], viewerId?: string | null): Promise<TQuestionRecord[]> {
  const ids = [...new Set(rows.flatMap((r) => [r.userId, r.answeredBy ?? r.userId]))];
  const people = new Map((await peopleByIds(db, ids)).map((u) => [u.id, u]));
  const person = (userId: string) => ({ userId, name: people.get(userId)?.name ?? null, email: people.get(userId)?.email ?? null });
  return rows.map((r) => ({
    id: r.clientId !== null && viewerId === r.userId ? r.clientId : r.id,
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

/**
 * Loads a question the actor may see: its own question under the id it chose first, else the
 * question with that primary key; others' questions look missing.
 */
export async function visibleQuestion(db: Db, actor: TActor, id: string): Promise<TQuestionRow> {
  const [own] = await db.select().from(questions).where(and(eq(questions.userId, actor.userId), eq(questions.clientId, id)));
  const row = own ?? (await questionById(db, id));
  if (!row || !canRead(actor, row.userId)) throw new QuestionError("QUESTION_NOT_FOUND", { code: "questionNotFound", params: { id } });
  return row;
}

/**
 * Registers a question inside the caller's transaction (so a run can suspend on it atomically).
 * The creator's authority (user, session, run, tool call) is captured with it. Returns null when
 * a run question of the same session is already pending (at most one per session), also when a
 * concurrent transaction inserted it first. `clientId`: the id a creator chose (`question.request`),
 * unique per creator (its own earlier question is `QUESTION_ID_IN_USE`).
 */
export async function insertQuestion(
  tx: Db,
  now: Date,
  input: { id?: string; clientId?: string; kind: TQuestionKind; questions: TQuestion[]; creator: TCreatorAuthority; timeoutMs: number },
): Promise<typeof questions.$inferSelect | null> {
  const clientId = input.clientId ?? null;
  const inUse = () => new QuestionError("QUESTION_ID_IN_USE", `You already have a question with id ${clientId}.`);
  // A chosen id is unique per creator: the creator's own earlier question is the conflict; another
  // creator's question with that id is not (this one gets its own primary key, and the answer
  // never tells that the id was taken).
  const ownAlready = async () => {
    if (clientId === null) return false;
    const [mine] = await tx.select({ id: questions.id }).from(questions).where(and(eq(questions.userId, input.creator.userId), eq(questions.clientId, clientId)));
    return mine !== undefined;
  };
  const keyTaken = async (key: string) => (await tx.select({ id: questions.id }).from(questions).where(eq(questions.id, key))).length > 0;
  if (await ownAlready()) throw inUse();
  const values = (id: string) => ({
    id,
    clientId,
    kind: input.kind,
    userId: input.creator.userId,
    sessionId: input.creator.sessionId,
    responseId: input.creator.responseId,
    callId: input.creator.callId,
    creator: input.creator,
    questions: input.questions,
    expiresAt: new Date(now.getTime() + input.timeoutMs),
  });
  // A server-chosen id (`input.id`, or a new one) is the key as it is.
  const id = clientId === null ? (input.id ?? newId("ask")) : !(await keyTaken(clientId)) ? clientId : newId("ask");
  // A concurrent insert may commit between the checks and this insert (the creator's same id,
  // another creator's same key, or another pending question of the session): the conflict then
  // leaves no row and changes nothing. A unique violation would abort the caller's transaction.
  const [row] = await tx.insert(questions).values(values(id)).onConflictDoNothing().returning();
  if (row) return row;
  if (await ownAlready()) throw inUse();
  if (id === clientId && (await keyTaken(id))) {
    // Another creator's question took the key first: this one gets its own.
    const [retried] = await tx.insert(questions).values(values(newId("ask"))).onConflictDoNothing().returning();
    if (retried) return retried;
    if (await ownAlready()) throw inUse();
  }
  return null;
}

/** A question by id, whatever its status (no visibility check: see {@link visibleQuestion}). */
export async function questionById(db: Db, id: string): Promise<TQuestionRow | null> {
  const [row] = await db.select().from(questions).where(eq(questions.id, id));
  return row ?? null;
}

/** A question by id while it is still pending; null once settled. */
export async function pendingQuestionById(db: Db, id: string): Promise<TQuestionRow | null> {
  const [row] = await db.select().from(questions).where(and(eq(questions.id, id), eq(questions.status, "pending")));
  return row ?? null;
}

/** The pending run-created question of a session, if any (plain text in the session goes to it). */
export async function pendingRunQuestionOfSession(db: Db, sessionId: string): Promise<TQuestionRow | null> {
  // A run's own question (one per session at most), or a question a run's tool call holds while the
  // run waits on it (a plugin's questions.ask, an MCP elicitation: kind gateway, the run's pending
  // action). A Gateway question nobody's run waits on is answered through the question routes only.
  const heldByWaitingRun = sql`exists (select 1 from ${responses} where ${responses.id} = ${questions.responseId} and ${responses.status} = 'requires_action' and ${responses.pendingAction} ->> 'id' = ${questions.id})`;
  const [row] = await db
    .select()
    .from(questions)
    .where(and(eq(questions.sessionId, sessionId), eq(questions.status, "pending"), or(ne(questions.kind, "gateway"), heldByWaitingRun)))
    .orderBy(desc(questions.createdAt))
    .limit(1);
  return row ?? null;
}

/** Which questions a page lists: the pending, the settled (answered, expired, cancelled), or all. */
export type TQuestionListStatus = "pending" | "settled" | "all";

/** One keyset page of question rows (of `userId` only, when given), newest first. */
export async function listQuestionRowsPage(
  db: Db,
  filter: { status: TQuestionListStatus; userId: string | null; cursor?: string | null; limit: number },
): Promise<TPage<TQuestionRow>> {
  const { status } = filter;
  const cursor = decodeCursor(filter.cursor);
  const rows = await db
    .select({ row: questions, cursorAt: exactTimestamp(questions.createdAt) })
    .from(questions)
    .where(
      and(
        status === "pending" ? eq(questions.status, "pending") : status === "settled" ? ne(questions.status, "pending") : undefined,
        filter.userId ? eq(questions.userId, filter.userId) : undefined,
        cursor ? beforeCursor(questions.createdAt, questions.id, cursor) : undefined,
      ),
    )
    .orderBy(desc(questions.createdAt), desc(questions.id))
    .limit(filter.limit + 1);
  const page = toPage(
    rows.map((r) => ({ id: r.row.id, cursorAt: r.cursorAt, row: r.row })),
    filter.limit,
  );
  return { rows: page.rows.map((r) => r.row), nextCursor: page.nextCursor };
}

/**
 * Settles a question exactly once: answered (with the answers as stored) or cancelled by
 * `answeredBy`, only while it is pending. The settled row, or null when another settlement won.
 */
export async function settlePendingQuestion(
  tx: Db,
  id: string,
  settlement: { status: "answered" | "cancelled"; answers: TAnswers | null; answeredBy: string; answeredVia: TTransport; resolvedAt: Date },
): Promise<TQuestionRow | null> {
  const [row] = await tx
    .update(questions)
    .set({ status: settlement.status, answers: settlement.answers, answeredBy: settlement.answeredBy, answeredVia: settlement.answeredVia, resolvedAt: settlement.resolvedAt })
    .where(and(eq(questions.id, id), eq(questions.status, "pending")))
    .returning();
  return row ?? null;
}

/** Cancels a still-pending question by the system (nobody waits for it any more): the row, or null once settled. */
export async function cancelPendingQuestion(tx: Db, id: string, now: Date): Promise<TQuestionRow | null> {
  const [row] = await tx
    .update(questions)
    .set({ status: "cancelled", answeredVia: "system", resolvedAt: now })
    .where(and(eq(questions.id, id), eq(questions.status, "pending")))
    .returning();
  return row ?? null;
}

/** Expires a pending question whose time is up (by the system): the row, or null when it settled or is not due. */
export async function expireDueQuestion(tx: Db, id: string, now: Date): Promise<TQuestionRow | null> {
  const [row] = await tx
    .update(questions)
    .set({ status: "expired", resolvedAt: now, answeredVia: "system" })
    .where(and(eq(questions.id, id), eq(questions.status, "pending"), lte(questions.expiresAt, now)))
    .returning();
  return row ?? null;
}

/** Cancels, by the system, every pending question of a response that is being cancelled. */
export async function cancelQuestionsOfResponse(tx: Db, responseId: string, now: Date): Promise<Array<{ id: string; responseId: string | null }>> {
  return tx
    .update(questions)
    .set({ status: "cancelled", answeredVia: "system", resolvedAt: now })
    .where(and(eq(questions.responseId, responseId), eq(questions.status, "pending")))
    .returning({ id: questions.id, responseId: questions.responseId });
}

/** The expiry sweep's query of the pending questions whose time is up, as `(type, id)` rows. */
export const dueQuestions = (now: Date): SQL =>
  sql`select ${"question"}::text as type, ${questions.id} as id from ${questions} where ${questions.status} = 'pending' and ${questions.expiresAt} <= ${now.toISOString()}::timestamptz`;

/** The stored (encrypted) value of one secret answer of a question, or null. */
export async function secretAnswerRow(db: Db, questionId: string, answerKey: string): Promise<typeof secretValues.$inferSelect | null> {
  const [row] = await db
    .select()
    .from(secretValues)
    .where(and(eq(secretValues.questionId, questionId), eq(secretValues.answerKey, answerKey)));
  return row ?? null;
}

/** A question with its run's agent (what a link page shows), the agent null when it has no run; null when the question does not exist. */
export async function questionWithAgent(db: Db, questionId: string) {
  const [found] = await db.select({ question: questions, agent: responses.agent }).from(questions).leftJoin(responses, eq(responses.id, questions.responseId)).where(eq(questions.id, questionId));
  return found ?? null;
}

/** A question's status now (whether a link used on it may be given back); null when it does not exist. */
export async function questionStatus(db: Db, questionId: string): Promise<string | null> {
  const [now] = await db.select({ status: questions.status }).from(questions).where(eq(questions.id, questionId));
  return now?.status ?? null;
}

/** When a question expires (what bounds a wait for its answer); null when it does not exist. */
export async function questionDeadline(db: Db, questionId: string): Promise<Date | null> {
  const [row] = await db.select({ expiresAt: questions.expiresAt }).from(questions).where(eq(questions.id, questionId));
  return row?.expiresAt ?? null;
}
