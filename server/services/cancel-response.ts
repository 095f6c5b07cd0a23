import { finishResponse, getResponse, lockActiveOrSuspended } from "../../db/repositories/responses";
import { type TActor, canDecide, canRead } from "../core/actor";
import type { TEnvelope } from "../core/envelope";
import { notFound, refused } from "../core/errors";
import type { TTransport } from "../core/vocabulary";
import type { TDeps } from "../host/deps";
import { cancelQueuedSteering } from "../host/steering";
import { transact } from "../host/transact";
import { cancelPendingOf } from "../host/pending/kinds";

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
  if (!canDecide(actor, existing.userId)) throw refused("forbidden", { code: "roleCannot", params: { act: "cancel" } });
  const cancelled = await transact(deps, async (tx, emit, announce) => {
    const row = await lockActiveOrSuspended(tx, input.responseId);
    if (!row) return null;
    // Nothing pending of any kind can be decided, submitted or answered after this commit.
    await cancelPendingOf(tx, emit, announce, row, { userId: actor.userId, via: input.via }, deps.now());
    const reason = input.reason ?? "Cancelled by the user.";
    const steering = await cancelQueuedSteering(deps, tx, row.id);
    const { envelope: env, stored } = finishResponse(tx, row, "cancelled", { cancelReason: reason });
    const [, frames] = await Promise.all([
      stored,
      emit(row.id, [
        ...steering,
        { type: "response.cancelled", data: { reason }, frame: false, actorUserId: actor.userId, transport: input.via },
        { type: "response.completed", data: { ...env, responseId: row.id }, frame: true },
      ]),
    ]);
    const frame = frames[frames.length - 1];
    // The attempt running it, on whichever replica, stops.
    announce({ k: "wake", responseId: row.id, reason: "cancel" });
    announce({ k: "inbox", change: { kind: "response", responseId: row.id } });
    return { envelope: env, sequence: frame?.sequence ?? 0 };
  });
  if (!cancelled) throw refused("conflict", { code: "responseClosed", params: { status: existing.status, act: "cancel" } });
  return { envelope: cancelled.envelope, sequence: cancelled.sequence };
}
