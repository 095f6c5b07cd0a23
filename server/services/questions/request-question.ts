import { z } from "zod";
import { runOwnerAndSession } from "../../../db/repositories/question-runs";
import { sessionOwnerId } from "../../../db/repositories/sessions";
import type { TActor } from "../../core/actor";
import { QuestionError } from "../../core/questions/errors";
import { ZQuestions } from "../../core/questions/schema";
import { refused } from "../../core/errors";
import { DEFAULT_QUESTION_TIMEOUT_MS } from "../../core/ttl";
import type { TTransport } from "../../core/vocabulary";
import type { TDeps } from "../../host/deps";
import { transact } from "../../host/transact";
import { insertQuestion, toRecords } from "../../../db/repositories/question-records";

export const ZGatewayQuestionId = z.string().regex(/^[A-Za-z0-9_:.-]{1,128}$/, "id must be 1–128 letters, digits or _:.-");
/** Any expiry from 1 s is accepted; a longer one than MAX_QUESTION_TIMEOUT_MS is shortened to it, and `expiresAtMs` says so. */
export const ZTimeoutMs = z.number().int().min(1000, "timeoutMs must be at least 1000");
/** A pending question stays at most 7 days: an unanswered one stays a stored row and an item in people's inboxes. */
export const MAX_QUESTION_TIMEOUT_MS = 7 * 24 * 3_600_000;

/** `question.request` params. */
export const ZRequestParams = z.strictObject({
  id: ZGatewayQuestionId.optional(),
  questions: ZQuestions,
  sessionId: z.string().min(1).optional(),
  responseId: z.string().min(1).optional(),
  timeoutMs: ZTimeoutMs.optional(),
});

/** `question.request` from a harness or tool through the gateway. */
export async function requestQuestion(
  deps: TDeps,
  actor: TActor,
  params: z.infer<typeof ZRequestParams>,
  via: TTransport = "http",
): Promise<{ id: string; expiresAtMs: number }> {
  if (actor.role === "auditor") throw refused("forbidden", { code: "auditorReadOnly", params: { act: "askQuestions" } });
  if (params.sessionId) {
    const owner = await sessionOwnerId(deps.db, params.sessionId);
    if (owner !== actor.userId) throw new QuestionError("INVALID_PARAMS", `No session with id ${params.sessionId} was found.`);
  }
  if (params.responseId) {
    const response = await runOwnerAndSession(deps.db, params.responseId);
    if (!response || response.userId !== actor.userId) throw new QuestionError("INVALID_PARAMS", `No response with id ${params.responseId} was found.`);
    if (params.sessionId && response.sessionId !== params.sessionId) throw new QuestionError("INVALID_PARAMS", "The response does not belong to that session.");
  }
  const row = await transact(deps, async (tx, emit) => {
    const inserted = await insertQuestion(tx, deps.now(), {
      ...(params.id !== undefined ? { clientId: params.id } : {}),
      kind: "gateway",
      questions: params.questions,
      creator: { userId: actor.userId, sessionId: params.sessionId ?? null, responseId: params.responseId ?? null, callId: null },
      timeoutMs: Math.min(params.timeoutMs ?? DEFAULT_QUESTION_TIMEOUT_MS, MAX_QUESTION_TIMEOUT_MS),
    });
    if (!inserted) throw new QuestionError("QUESTION_ID_IN_USE", "The question could not be registered; try again.");
    // Broadcast with the record on the response it names (as `question.resolved` is).
    if (inserted.responseId) {
      const [record] = await toRecords(tx, [inserted], actor.userId);
      await emit(inserted.responseId, [{ type: "question.requested", data: { question: record }, frame: true, actorUserId: actor.userId, transport: via }]);
    }
    return inserted;
  });
  deps.bus.publishQuestion({ questionId: row.id, status: "pending" });
  deps.bus.publishInbox({ kind: "question", responseId: row.responseId, id: row.id });
  // The creator's handle: the id it chose (also when another creator's question has that key).
  return { id: row.clientId ?? row.id, expiresAtMs: row.expiresAt.getTime() };
}
