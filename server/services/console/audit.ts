import { getSession, sessionResponses } from "../../../db/repositories/console-lists";
import { userById } from "../../../db/repositories/console-admin";
import { latestAccessGrants } from "../../../db/repositories/session-access";
import { canDecide } from "../../core/actor";
import type { TReadScope } from "../../core/read-scope";
import { notFound } from "../../core/errors";
import { accessChangeRefusal } from "../../core/session-access";
import type { TDeps } from "../../host/deps";
import type { TRunStarter } from "../../ports/run-starter";
import { envelopeNow, readResponse } from "../read/responses";

/** Named here too for the transports that import it with the summaries. */
export type { TTrajectoryScope } from "../read/trajectory";

/** One response for the console, without its trajectory (the audit timeline pages through that). */
export async function responseSummary(deps: TDeps & { host?: TRunStarter }, scope: TReadScope, responseId: string) {
  const { actor } = scope;
  const row = await readResponse(deps, scope, responseId);
  const owner = await userById(deps.db, row.userId);
  return {
    envelope: await envelopeNow(deps, row),
    agent: row.agent,
    userId: row.userId,
    user: owner?.name ?? row.userId,
    userEmail: owner?.email ?? null,
    /** May the caller cancel or steer it (owner, operator, admin; never an auditor)? */
    canAct: canDecide(actor, row.userId),
    /** May the caller ask its harness side questions (it answers them, and the caller may steer it)? */
    canAskSideQuestions: canDecide(actor, row.userId) && deps.host?.answersSideQuestions?.(row.agent) === true && (actor.userId === row.userId || deps.host?.crossProfileSteering?.(row.agent) !== false),
    lastFrameSeq: row.nextFrameSeq - 1,
    eventCount: row.nextSeq,
    cancelReason: row.cancelReason,
    /** The files the run was given (facts; the bytes are served by `/v1/responses/{id}/attachments/{attachmentId}`). */
    attachments: row.attachments.map((a) => ({ ...a, url: `/v1/responses/${row.id}/attachments/${a.id}` })),
    createdAt: row.createdAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
  };
}

/** One session: owner, access (and who granted Full access, when), its responses and their usage. */
export async function sessionSummary(deps: TDeps, scope: TReadScope, sessionId: string) {
  const { actor } = scope;
  const found = await getSession(deps.db, sessionId);
  if (!found || !scope.canRead(found.session.userId)) throw notFound("session", sessionId);
  const rows = await sessionResponses(deps.db, sessionId);
  const { session: s } = found;
  return {
    id: s.id,
    agent: s.agent,
    userId: s.userId,
    user: found.user,
    userEmail: found.userEmail,
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
