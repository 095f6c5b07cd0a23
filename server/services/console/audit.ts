import { getSession, sessionResponses } from "../../../db/repositories/console-lists";
import { requiredActionOf } from "../../host/pending/kinds";
import { envelopeOf, getResponse } from "../../../db/repositories/responses";
import { userById } from "../../../db/repositories/console-admin";
import { latestAccessGrants } from "../../../db/repositories/session-access";
import { type TActor, canDecide, canRead } from "../../core/actor";
import { notFound } from "../../core/errors";
import { accessChangeRefusal } from "../../core/session-access";
import type { TDeps } from "../../host/deps";

export type TTrajectoryScope = { responseId: string } | { sessionId: string };

/** Refuses (404, as if missing) a trajectory the actor may not read; members read only their own. */
export async function assertTrajectoryReadable(deps: TDeps, actor: TActor, scope: TTrajectoryScope): Promise<void> {
  if ("responseId" in scope) {
    const row = await getResponse(deps.db, scope.responseId);
    if (!row || !canRead(actor, row.userId)) throw notFound("response", scope.responseId);
    return;
  }
  const session = await getSession(deps.db, scope.sessionId);
  if (!session || !canRead(actor, session.session.userId)) throw notFound("session", scope.sessionId);
}

/** One response for the console, without its trajectory (the audit timeline pages through that). */
export async function responseSummary(deps: TDeps, actor: TActor, responseId: string) {
  const row = await getResponse(deps.db, responseId);
  if (!row || !canRead(actor, row.userId)) throw notFound("response", responseId);
  const action = row.status === "requires_action" ? await requiredActionOf(deps.db, row.pendingAction) : null;
  const owner = await userById(deps.db, row.userId);
  return {
    envelope: row.envelope ?? envelopeOf(row, row.status, action),
    agent: row.agent,
    userId: row.userId,
    user: owner?.name ?? row.userId,
    /** May the caller cancel or steer it (owner, operator, admin; never an auditor)? */
    canAct: canDecide(actor, row.userId),
    lastFrameSeq: row.nextFrameSeq - 1,
    eventCount: row.nextSeq,
    cancelReason: row.cancelReason,
    createdAt: row.createdAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
  };
}

/** One session: owner, access (and who granted Full access, when), its responses and their usage. */
export async function sessionSummary(deps: TDeps, actor: TActor, sessionId: string) {
  const found = await getSession(deps.db, sessionId);
  if (!found || !canRead(actor, found.session.userId)) throw notFound("session", sessionId);
  const rows = await sessionResponses(deps.db, sessionId);
  const { session: s } = found;
  return {
    id: s.id,
    agent: s.agent,
    userId: s.userId,
    user: found.user,
    access: s.access,
    /** Whether the caller may switch it the other way (sessions.setAccess): operators and admins; an owner only down to default. */
    canChangeAccess: accessChangeRefusal(actor, s.userId, s.access === "full" ? "default" : "full") === null,
    /** The Full access grant in force (from the audit log); null at default access. */
    fullAccessGrant: s.access === "full" ? ((await latestAccessGrants(deps.db, [s.id])).get(s.id) ?? null) : null,
    createdAt: s.createdAt.toISOString(),
    outputTokens: rows.reduce((n, r) => n + r.usage.outputTokens, 0),
    responses: rows.map((r) => ({ id: r.id, status: r.status, outputTokens: r.usage.outputTokens, createdAt: r.createdAt.toISOString(), completedAt: r.completedAt?.toISOString() ?? null })),
  };
}

const DISPLAY_LIMIT = 16_384;

/**
 * An event's data for the console list: whole when small; else its short top-level fields (status,
 * ids, counts) and a marked preview — the export always has it whole.
 */
export function dataForDisplay(data: Record<string, unknown>): Record<string, unknown> {
  const text = JSON.stringify(data);
  if (text.length <= DISPLAY_LIMIT) return data;
  const scalars = Object.fromEntries(
    Object.entries(data).filter(([, v]) => typeof v === "number" || typeof v === "boolean" || v === null || (typeof v === "string" && v.length <= 200)),
  );
  return { ...scalars, truncated: true, bytes: text.length, preview: `${text.slice(0, DISPLAY_LIMIT)}…` };
}
