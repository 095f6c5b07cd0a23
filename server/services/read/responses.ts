import { recentResponsesWithOwner, sessionResponseUsage } from "../../../db/repositories/console-lists";
import { trajectoryTail } from "../../../db/repositories/events";
import { envelopeOf, getResponse, getResponseView, type TResponseRow, type TResponseView } from "../../../db/repositories/responses";
import type { TEnvelope } from "../../core/envelope";
import { notFound } from "../../core/errors";
import type { TFrame } from "../../core/frames";
import type { TReadScope } from "../../core/read-scope";
import type { TDeps } from "../../host/deps";
import { requiredActionOf } from "../../host/pending/kinds";
import { followFrames } from "../follow-frames";

/**
 * `row` when `scope` may read it, or a 404 (another user's response looks missing). With
 * `sessionId` (the `/v1` routes name the session too) the response must belong to that session.
 */
function readable<T extends Pick<TResponseRow, "userId" | "sessionId">>(row: T | null, scope: TReadScope, responseId: string, sessionId: string | undefined): T {
  if (!row || !scope.canRead(row.userId) || (sessionId !== undefined && row.sessionId !== sessionId)) throw notFound("response", responseId);
  return row;
}

/** One response, whole, as `scope` may read it (see {@link readable}). */
export async function readResponse(deps: Pick<TDeps, "db">, scope: TReadScope, responseId: string, options: { sessionId?: string } = {}): Promise<TResponseRow> {
  return readable(await getResponse(deps.db, responseId), scope, responseId, options.sessionId);
}

/** One response's view (who may read it, its envelope), for readers that need nothing else; the same check as {@link readResponse}. */
export async function viewResponse(deps: Pick<TDeps, "db">, scope: TReadScope, responseId: string, options: { sessionId?: string } = {}): Promise<TResponseView> {
  return readable(await getResponseView(deps.db, responseId), scope, responseId, options.sessionId);
}

/** A response's latest envelope: the stored one once terminal (identical on every replica), otherwise built from the current state. */
export async function envelopeNow(deps: Pick<TDeps, "db">, row: TResponseRow | TResponseView): Promise<TEnvelope> {
  if (row.envelope) return row.envelope;
  const action = row.status === "requires_action" ? await requiredActionOf(deps.db, row.pendingAction) : null;
  // A view's output is null only beside a stored envelope.
  return envelopeOf({ ...row, output: row.output ?? [] }, row.status, action);
}

/** The latest envelope of a response `scope` may read (in `sessionId`, when given). */
export async function readEnvelope(deps: Pick<TDeps, "db">, scope: TReadScope, input: { responseId: string; sessionId?: string }): Promise<TEnvelope> {
  return envelopeNow(deps, await viewResponse(deps, scope, input.responseId, { sessionId: input.sessionId }));
}

/**
 * "Follow this response", the same check on every transport (WebSocket, SSE, tRPC, AG-UI): the
 * scope must read it (in `sessionId`, when given), then its frames after `after` are yielded in
 * order, stored ones first. The check happens before the first frame, so a refusal is a 404.
 */
export async function followResponse(
  deps: TDeps,
  scope: TReadScope,
  input: { responseId: string; after: number; sessionId?: string },
  signal: AbortSignal,
): Promise<AsyncGenerator<TFrame>> {
  await viewResponse(deps, scope, input.responseId, { sessionId: input.sessionId });
  return followFrames(deps, input.responseId, input.after, signal);
}

/** The sequence of the newest frame of a response (0 before its first); a resumed follower starts after it. */
export async function lastSequenceOf(deps: Pick<TDeps, "db">, responseId: string): Promise<number> {
  const row = await getResponse(deps.db, responseId);
  return (row?.nextFrameSeq ?? 1) - 1;
}

/** The most trajectory events `responseDetail` returns (the newest ones). */
const TRAJECTORY_TAIL = 1000;

/** The newest 100 responses `scope` may read, with their owner's name and email. */
export async function recentResponses(deps: Pick<TDeps, "db">, scope: TReadScope) {
  const rows = await recentResponsesWithOwner(deps.db, scope.userId);
  return rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() }));
}

/** One response with its envelope and the newest 1,000 events of its trajectory. */
export async function responseDetail(deps: Pick<TDeps, "db">, scope: TReadScope, responseId: string) {
  const row = await readResponse(deps, scope, responseId);
  const envelope = await envelopeNow(deps, row);
  const { events: trajectory, total } = await trajectoryTail(deps.db, row.id, TRAJECTORY_TAIL);
  return {
    envelope,
    agent: row.agent,
    createdAt: row.createdAt.toISOString(),
    /** How many trajectory events the response has; `trajectory` holds the last 1,000 (audit.trajectory pages through all). */
    trajectoryTotal: total,
    trajectoryTruncated: total > trajectory.length,
    trajectory: trajectory.map((e) => ({
      seq: e.seq,
      frameSeq: e.frameSeq,
      type: e.type,
      data: e.data,
      actorUserId: e.actorUserId,
      transport: e.transport,
      createdAt: e.createdAt.toISOString(),
    })),
  };
}

/** Token usage of a session's responses that `scope` may read, per response and in total (404 when none). */
export async function sessionUsage(deps: Pick<TDeps, "db">, scope: TReadScope, sessionId: string) {
  const rows = await sessionResponseUsage(deps.db, sessionId);
  const visible = rows.filter((r) => scope.canRead(r.userId));
  if (visible.length === 0) throw notFound("session", sessionId);
  return {
    sessionId,
    outputTokens: visible.reduce((sum, r) => sum + r.usage.outputTokens, 0),
    inputTokens: visible.reduce((sum, r) => sum + r.usage.inputTokens, 0),
    responses: visible.map((r) => ({ id: r.id, ...r.usage, createdAt: r.createdAt.toISOString() })),
  };
}
