import { sql } from "drizzle-orm";
import { index, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { QUESTION_KINDS, QUESTION_STATUSES, type TAnswers, type TQuestion } from "../../server/core/questions/schema";
import { transportEnum } from "./responses";

export const questionStatusEnum = pgEnum("question_status", QUESTION_STATUSES);
export const questionKindEnum = pgEnum("question_kind", QUESTION_KINDS);

/** The authority a question keeps: who asked, from which run and session. */
/** `authority: "source-bound"`: answers are accepted only while the asker's source is current (server/host/authority.ts). */
export type TCreatorAuthority = { userId: string; sessionId: string | null; responseId: string | null; callId: string | null; authority?: "source-bound" };

/**
 * A question to a person. Secret answers are never stored here (the record shows "stored").
 * Resolution receipts are not stored at all: they are transient (see server/host/receipts.ts).
 */
export const questions = pgTable(
  "questions",
  {
    id: text("id").primaryKey(),
    /**
     * The id the creator chose (`question.request {id}`), unique per creator: the creator addresses
     * the question by it. The primary key is that same id unless another creator's question has it.
     */
    clientId: text("client_id"),
    kind: questionKindEnum("kind").notNull(),
    userId: text("user_id").notNull(),
    sessionId: text("session_id"),
    responseId: text("response_id"),
    callId: text("call_id"),
    creator: jsonb("creator").$type<TCreatorAuthority>().notNull(),
    questions: jsonb("questions").$type<TQuestion[]>().notNull(),
    status: questionStatusEnum("status").notNull().default("pending"),
    answers: jsonb("answers").$type<TAnswers | null>(),
    answeredBy: text("answered_by"),
    answeredVia: transportEnum("answered_via"),
    resolvedAt: timestamp("resolved_at", { withTimezone: true }),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("questions_pending_idx").on(t.expiresAt).where(sql`status = 'pending'`),
    uniqueIndex("questions_one_pending_per_session").on(t.sessionId).where(sql`status = 'pending' and session_id is not null and kind <> 'gateway'`),
    index("questions_user_idx").on(t.userId, t.createdAt),
    uniqueIndex("questions_client_id_uq").on(t.userId, t.clientId).where(sql`client_id is not null`),
  ],
);

/** Secret answers, encrypted at rest (AES-256-GCM) with the configured key. */
export const secretValues = pgTable(
  "secret_values",
  {
    id: text("id").primaryKey(),
    questionId: text("question_id").notNull(),
    answerKey: text("answer_key").notNull(),
    userId: text("user_id").notNull(),
    ciphertext: text("ciphertext").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("secret_values_answer_uq").on(t.questionId, t.answerKey)],
);
