import { listApiKeysPage, listPeople, listUsers, listUsersPage, type TPageRequest } from "../../../db/repositories/console-admin";
import { listResponsesPage, listSessionsPage } from "../../../db/repositories/console-lists";
import { peopleByIds } from "../../../db/repositories/display-names";
import { approvalPlace, approvalRun, listInbox, sessionContext } from "../../../db/repositories/inbox";
import { getResponse } from "../../../db/repositories/responses";
import { listNotificationAttempts, listNotificationChannels, listNotificationsPage } from "../../../db/repositories/notifications";
import { searchTrajectory, trajectoryActors, trajectoryBatches } from "../../../db/repositories/trajectory-search";
import { usageByDay } from "../../../db/repositories/usage";
import { notFound } from "../../core/errors";
import type { TReadScope } from "../../core/read-scope";
import type { TRole } from "../../core/vocabulary";
import type { TDeps } from "../../host/deps";
import { listWaiting } from "../../host/pending/kinds";
import { responseFileUrl, runFiles, type TRunFile } from "./attachments";
import { assertTrajectoryReadable, dataForDisplay, type TTrajectoryRange, type TTrajectoryScope } from "./trajectory";

/**
 * The console's named reads. Each takes the caller's {@link TReadScope}: a member's scope limits
 * every list to its own objects, and one object outside the scope is a 404. Transports call
 * these, never the tables.
 */
type TDb = Pick<TDeps, "db">;
type TArgs<F> = F extends (db: never, filter: infer A) => unknown ? A : never;

export const waitingNow = (deps: TDb, scope: TReadScope) => listWaiting(deps.db, { userId: scope.userId });

export const inboxPage = (deps: Pick<TDeps, "db" | "now">, scope: TReadScope, filter: Omit<TArgs<typeof listInbox>, "scopeUserId" | "now">) =>
  listInbox(deps.db, { ...filter, scopeUserId: scope.userId, now: deps.now() });

export const responsesPage = (deps: TDb, scope: TReadScope, filter: Omit<TArgs<typeof listResponsesPage>, "scopeUserId">) =>
  listResponsesPage(deps.db, { ...filter, scopeUserId: scope.userId });

export const sessionsPage = (deps: TDb, scope: TReadScope, filter: Omit<TArgs<typeof listSessionsPage>, "scopeUserId">) =>
  listSessionsPage(deps.db, { ...filter, scopeUserId: scope.userId });

export const usagePerDay = (deps: TDb, scope: TReadScope, filter: Omit<TArgs<typeof usageByDay>, "scopeUserId">) =>
  usageByDay(deps.db, { ...filter, scopeUserId: scope.userId });

/** People to filter by: everyone for a scope that reads all, else only oneself. */
export const people = (deps: TDb, scope: TReadScope) => listPeople(deps.db, scope.userId);

/** Every user and role (the procedure admits workspace readers only). */
export const workspaceUsers = (deps: TDb) => listUsers(deps.db);
/** One page of users, newest first (the procedure admits workspace readers only). */
export const workspaceUsersPage = (deps: TDb, page: TPageRequest) => listUsersPage(deps.db, page);

/** Roles that see every API key (prefixes only); the others see their own. */
const KEY_READERS: readonly TRole[] = ["admin", "auditor"];
const keyOwnerFilter = (scope: TReadScope): string | null => (KEY_READERS.includes(scope.actor.role) ? null : scope.actor.userId);
/** One page of the API keys the scope sees, newest first. */
export const apiKeysPage = (deps: TDb, scope: TReadScope, page: TPageRequest) => listApiKeysPage(deps.db, keyOwnerFilter(scope), page);
/** The API keys the scope sees (up to 1,000): the first page of {@link apiKeysPage}. */
export const apiKeysVisible = async (deps: TDb, scope: TReadScope) => (await apiKeysPage(deps, scope, { limit: 1000 })).rows;

/** The notification log (the procedures admit workspace readers only). */
export const notificationsPage = (deps: TDb, filter: TArgs<typeof listNotificationsPage>) => listNotificationsPage(deps.db, filter);
export const notificationAttempts = (deps: TDb, notificationId: string) => listNotificationAttempts(deps.db, notificationId);
export const notificationChannels = (deps: TDb) => listNotificationChannels(deps.db);

/** The last few turns of an approval's session, up to its response (404 outside the scope). */
export async function approvalContext(deps: TDb, scope: TReadScope, approvalId: string) {
  const a = await approvalPlace(deps.db, approvalId);
  if (!a || !scope.canRead(a.userId)) throw notFound("approval", approvalId);
  return sessionContext(deps.db, { sessionId: a.sessionId, responseId: a.responseId });
}

/** The files of an approval's run so far (given and attached), served by `/v1` to the same readers (404 outside the scope). */
export async function approvalFiles(deps: TDb, scope: TReadScope, approvalId: string): Promise<TRunFile[]> {
  const a = await approvalRun(deps.db, approvalId);
  if (!a || !scope.canRead(a.userId)) throw notFound("approval", approvalId);
  const run = await getResponse(deps.db, a.responseId);
  return run ? runFiles(run, (id) => responseFileUrl(run.id, id)) : [];
}

/** One keyset page of a trajectory the scope may read, filtered by category, actor and text. */
export async function trajectoryPage(
  deps: TDeps,
  scope: TReadScope,
  of: TTrajectoryScope,
  query: { categories?: Parameters<typeof searchTrajectory>[1]["categories"]; actor?: string; q?: string; cursor?: number | null; limit: number },
) {
  await assertTrajectoryReadable(deps, scope, of);
  const page = await searchTrajectory(deps.db, { ...of, categories: query.categories, actor: query.actor, q: query.q }, { after: query.cursor ?? null, limit: query.limit });
  return { nextAfter: page.nextAfter, events: page.rows.map((e) => ({ ...e, data: dataForDisplay(e.data), createdAt: e.createdAt.toISOString() })) };
}

/** The people who caused events in a trajectory the scope may read, with their names and emails. */
export async function trajectoryPeople(deps: TDeps, scope: TReadScope, of: TTrajectoryScope) {
  await assertTrajectoryReadable(deps, scope, of);
  return peopleByIds(deps.db, await trajectoryActors(deps.db, of));
}

/**
 * A whole trajectory the scope may read (else a 404 before anything is streamed), filtered like
 * the audit view, in keyset batches of `batch` events: never all in memory.
 */
export async function trajectoryExport(
  deps: Pick<TDeps, "db">,
  scope: TReadScope,
  of: TTrajectoryScope | TTrajectoryRange,
  filters: { categories?: Parameters<typeof searchTrajectory>[1]["categories"]; actor?: string; q?: string },
  batch: number,
  signal: AbortSignal,
) {
  await assertTrajectoryReadable(deps, scope, of);
  return withActors(deps, trajectoryBatches(deps.db, { ...of, ...filters }, batch, signal));
}

/** Each batch's events with the name and email of the person who caused each (one query per batch). */
async function* withActors<T extends { actorUserId: string | null }>(deps: TDb, batches: AsyncIterable<T[]>): AsyncGenerator<Array<T & { actorName: string | null; actorEmail: string | null }>> {
  for await (const rows of batches) {
    const ids = [...new Set(rows.flatMap((r) => (r.actorUserId ? [r.actorUserId] : [])))];
    const people = new Map((await peopleByIds(deps.db, ids)).map((u) => [u.id, u]));
    yield rows.map((r) => {
      const person = r.actorUserId ? people.get(r.actorUserId) : undefined;
      return { ...r, actorName: person?.name ?? null, actorEmail: person?.email ?? null };
    });
  }
}
