import { inArray } from "drizzle-orm";
import { z } from "zod";
import { listResponsesPage, listSessionsPage } from "../../../../db/repositories/console-lists";
import { EVENT_CATEGORY_NAMES, searchTrajectory, trajectoryActors } from "../../../../db/repositories/trajectory-search";
import { users } from "../../../../db/schema";
import { RESPONSE_STATUSES } from "../../../core/vocabulary";
import { assertTrajectoryReadable, dataForDisplay, responseSummary, sessionSummary, type TTrajectoryScope } from "../../../services/console/audit";
import { authenticatedProcedure, router } from "../init";
import { scopeOf } from "./console-procedures";
import { responseTimeline } from "./timeline";

const ZId = z.string().min(1).max(200);
const ZDirection = z.enum(["forward", "backward"]).optional();
const ZDate = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const ZListFilter = {
  agent: z.string().min(1).max(64).optional(),
  userId: ZId.optional(),
  from: ZDate.optional(),
  to: ZDate.optional(),
  q: z.string().trim().min(1).max(200).optional(),
  cursor: z.string().max(400).nullish(),
  limit: z.number().int().min(1).max(200).default(50),
  /** Sent by tRPC's infinite queries; lists page forward only. */
  direction: ZDirection,
};
/** A response's or a session's trajectory: exactly one of the two. */
const oneScope = (v: { responseId?: string; sessionId?: string }) => (v.responseId ? 1 : 0) + (v.sessionId ? 1 : 0) === 1;
const ZScopeFields = { responseId: ZId.optional(), sessionId: ZId.optional() };
const ZScope = z.strictObject(ZScopeFields).refine(oneScope, "Give exactly one of responseId and sessionId.");
const ZTrajectoryQuery = z
  .strictObject({
    ...ZScopeFields,
    categories: z.array(z.enum(EVENT_CATEGORY_NAMES)).max(EVENT_CATEGORY_NAMES.length).optional(),
    /** A user id, or `system`. */
    actor: ZId.optional(),
    q: z.string().trim().min(1).max(200).optional(),
    /** Keyset position to continue after (exclusive): `nextAfter` of the previous page. */
    cursor: z.number().int().min(-1).nullish(),
    limit: z.number().int().min(1).max(1000).default(500),
    direction: ZDirection,
  })
  .refine(oneScope, "Give exactly one of responseId and sessionId.");
const scopeOfInput = (v: { responseId?: string; sessionId?: string }): TTrajectoryScope => (v.responseId ? { responseId: v.responseId } : { sessionId: v.sessionId ?? "" });

/** Searchable response and session lists, one response or session, and trajectory audit. */
export const auditRouter = router({
  responses: authenticatedProcedure
    .input(z.strictObject({ ...ZListFilter, statuses: z.array(z.enum(RESPONSE_STATUSES)).max(RESPONSE_STATUSES.length).optional() }))
    .query(({ ctx, input }) => listResponsesPage(ctx.deps.db, { ...input, scopeUserId: scopeOf(ctx.actor) })),
  sessions: authenticatedProcedure
    .input(z.strictObject({ ...ZListFilter, state: z.enum(["active", "idle"]).optional() }))
    .query(({ ctx, input }) => listSessionsPage(ctx.deps.db, { ...input, scopeUserId: scopeOf(ctx.actor) })),
  /** One response without its trajectory (the audit timeline pages through that). */
  response: authenticatedProcedure.input(z.strictObject({ responseId: ZId })).query(({ ctx, input }) => responseSummary(ctx.deps, ctx.actor, input.responseId)),
  /** One response as a tree of turns, tool calls and waits for people, with durations and tokens. */
  timeline: authenticatedProcedure.input(z.strictObject({ responseId: ZId })).query(({ ctx, input }) => responseTimeline(ctx.deps, ctx.actor, input.responseId)),
  /** One session: owner, access, its responses and their usage. */
  session: authenticatedProcedure.input(z.strictObject({ sessionId: ZId })).query(({ ctx, input }) => sessionSummary(ctx.deps, ctx.actor, input.sessionId)),
  /** One keyset page of a trajectory, filtered by category, actor and text (server-side). */
  trajectory: authenticatedProcedure.input(ZTrajectoryQuery).query(async ({ ctx, input }) => {
    const scope = scopeOfInput(input);
    await assertTrajectoryReadable(ctx.deps, ctx.actor, scope);
    const page = await searchTrajectory(ctx.deps.db, { ...scope, categories: input.categories, actor: input.actor, q: input.q }, { after: input.cursor ?? null, limit: input.limit });
    return { nextAfter: page.nextAfter, events: page.rows.map((e) => ({ ...e, data: dataForDisplay(e.data), createdAt: e.createdAt.toISOString() })) };
  }),
  /** The people who caused events in a trajectory, for the actor filter. */
  actors: authenticatedProcedure.input(ZScope).query(async ({ ctx, input }) => {
    const scope = scopeOfInput(input);
    await assertTrajectoryReadable(ctx.deps, ctx.actor, scope);
    const ids = await trajectoryActors(ctx.deps.db, scope);
    if (ids.length === 0) return [];
    return ctx.deps.db.select({ id: users.id, name: users.name }).from(users).where(inArray(users.id, ids));
  }),
});
