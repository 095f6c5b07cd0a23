import { envelopeOf, getResponse } from "../../db/repositories/responses";
import { requiredActionOf } from "../host/pending/kinds";
import type { TActor } from "../core/actor";
import type { TEnvelope } from "../core/envelope";
import { notFound } from "../core/errors";
import type { TDeps } from "../host/deps";

/**
 * The latest envelope of a response for its own user and session: the stored envelope once
 * terminal (identical on every replica), otherwise built from the current state.
 */
export async function getResponseEnvelope(deps: TDeps, actor: TActor, input: { responseId: string; sessionId: string }): Promise<TEnvelope> {
  const row = await getResponse(deps.db, input.responseId);
  if (!row || row.userId !== actor.userId || row.sessionId !== input.sessionId) throw notFound("response", input.responseId);
  if (row.envelope) return row.envelope;
  const action = row.status === "requires_action" ? await requiredActionOf(deps.db, row.pendingAction) : null;
  return envelopeOf(row, row.status, action);
}
