import { mediaBytesOf } from "../../../db/repositories/media";
import { visibleQuestion } from "../../../db/repositories/question-records";
import type { TResponseRow } from "../../../db/repositories/responses";
import { notFound } from "../../core/errors";
import type { TReadScope } from "../../core/read-scope";
import type { TDeps } from "../../host/deps";
import { readResponse } from "./responses";

/** A file of a response as it is served: facts and bytes. */
export type TAttachmentDownload = { id: string; name: string; mediaType: string; size: number; bytes: Uint8Array };

/** A file of a run as the console lists it: its facts, where it is served, and whether the run was given it or its agent attached it. */
export type TRunFile = { id: string; name: string; mediaType: string; size: number; url: string; origin: "given" | "reply" };

/** Where `/v1` serves a file of a response (to those who may read the response). */
export const responseFileUrl = (responseId: string, attachmentId: string): string => `/v1/responses/${encodeURIComponent(responseId)}/attachments/${encodeURIComponent(attachmentId)}`;

/** Where an answer page fetches a file of its question's run (to its signed-in reader or the answer link's holder). */
export const answerFileUrl = (questionId: string, attachmentId: string): string => `/api/answer/${encodeURIComponent(questionId)}/files/${encodeURIComponent(attachmentId)}`;

/** The files a run refers to so far: those it was given, then those its agent attached to its answer, each once. */
export function runFiles(row: Pick<TResponseRow, "attachments" | "output">, urlOf: (attachmentId: string) => string): TRunFile[] {
  const files: TRunFile[] = row.attachments.map((a) => ({ id: a.id, name: a.name, mediaType: a.mediaType, size: a.size, url: urlOf(a.id), origin: "given" }));
  for (const item of row.output) {
    if (item.type !== "attachment" || files.some((f) => f.id === item.id && f.name === item.name)) continue;
    files.push({ id: item.id, name: item.name, mediaType: item.mediaType, size: item.size, url: urlOf(item.id), origin: "reply" });
  }
  return files;
}

/**
 * One attachment of a response, for those who may read the response (its owner, and the roles
 * that read everything): a file the agent attached to its answer, or one the run was given. Any
 * other id (or a response the scope may not read) is a 404.
 */
export async function readResponseAttachment(deps: Pick<TDeps, "db">, scope: TReadScope, input: { responseId: string; attachmentId: string; sessionId?: string }): Promise<TAttachmentDownload> {
  const row = await readResponse(deps, scope, input.responseId, { sessionId: input.sessionId });
  const reply = row.output.find((item) => item.type === "attachment" && item.id === input.attachmentId);
  const fact = reply?.type === "attachment" ? reply : row.attachments.find((a) => a.id === input.attachmentId);
  if (!fact) throw notFound("attachment", input.attachmentId);
  // The media belongs to the response's owner, whoever reads it.
  const bytes = (await mediaBytesOf(deps.db, row.userId, [fact.id])).get(fact.id);
  if (!bytes) throw notFound("attachment", input.attachmentId);
  return { id: fact.id, name: fact.name, mediaType: fact.mediaType, size: bytes.byteLength, bytes };
}

/**
 * A file of the run that asks a question, for someone who may see the question and read that run
 * (the same rule as the question's context): only that run's files; anything else is a 404.
 */
export async function readQuestionAttachment(deps: Pick<TDeps, "db">, scope: TReadScope, input: { questionId: string; attachmentId: string }): Promise<TAttachmentDownload> {
  const question = await visibleQuestion(deps.db, scope.actor, input.questionId).catch(() => null);
  if (!question?.responseId) throw notFound("attachment", input.attachmentId);
  return readResponseAttachment(deps, scope, { responseId: question.responseId, attachmentId: input.attachmentId });
}
