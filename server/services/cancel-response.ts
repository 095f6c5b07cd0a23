import { and, eq, ne } from "drizzle-orm";
import { finishResponse, getResponse, lockActiveOrSuspended } from "../../db/repositories/responses";
import { approvals, clientToolRequests, questions } from "../../db/schema";
import { type TActor, canDecide, canRead } from "../core/actor";
import type { TEnvelope } from "../core/envelope";
import { DomainError, notFound } from "../core/errors";
import type { TTransport } from "../core/vocabulary";
import type { TDeps } from "../host/deps";
import { cancelQueuedSteering } from "../host/steering";
import { transact } from "../host/transact";

/**
 * Cancels an unsettled response: pending approvals and client-tool requests are cancelled in
 * the same transaction (so no later decision can run them), and so are queued steering messages;
 * then the running attempt is aborted.
 */
export async function cancelResponse(
  deps: TDeps,
  actor: TActor,
  input: { responseId: string; reason?: string; via: TTransport },
): Promise<{ envelope: TEnvelope; sequence: number }> {
  const existing = await getResponse(deps.db, input.responseId);
  if (!existing || !canRead(actor, existing.userId)) throw notFound("response", input.responseId);
  if (!canDecide(actor, existing.userId)) throw new DomainError("forbidden", "Your role cannot cancel responses.");
  const cancelled = await transact(deps, async (tx, emit) => {
    const row = await lockActiveOrSuspended(tx, input.responseId);
    if (!row) return null;
    await tx.update(approvals).set({ status: "cancelled", decidedAt: deps.now(), decidedVia: input.via, decidedBy: actor.userId }).where(and(eq(approvals.responseId, row.id), eq(approvals.status, "pending")));
    await tx.update(clientToolRequests).set({ status: "cancelled" }).where(and(eq(clientToolRequests.responseId, row.id), eq(clientToolRequests.status, "pending")));
    const cancelledQuestions = await tx
      .update(questions)
      .set({ status: "cancelled", answeredVia: "system", resolvedAt: deps.now() })
      .where(and(eq(questions.responseId, row.id), eq(questions.status, "pending"), ne(questions.kind, "gateway")))
      .returning({ id: questions.id });
    const reason = input.reason ?? "Cancelled by the user.";
    await cancelQueuedSteering(deps, tx, emit, row.id);
    const env = await finishResponse(tx, row, "cancelled", { cancelReason: reason });
    const [frame] = await emit(row.id, [
      { type: "response.cancelled", data: { reason }, frame: false, actorUserId: actor.userId, transport: input.via },
      { type: "response.completed", data: { ...env, responseId: row.id }, frame: true },
    ]);
    return { envelope: env, sequence: frame?.sequence ?? 0, questionIds: cancelledQuestions.map((q) => q.id) };
  });
  if (!cancelled) throw new DomainError("conflict", `The response is already ${existing.status}; it cannot be cancelled.`);
  deps.bus.publishWake(input.responseId, "cancel");
  deps.bus.publishInbox({ kind: "response", responseId: input.responseId });
  // Waiters on the run's questions learn at once that they were cancelled.
  for (const questionId of cancelled.questionIds) deps.bus.publishQuestion({ questionId, status: "cancelled" });
  return { envelope: cancelled.envelope, sequence: cancelled.sequence };
}
