import { z } from "zod";
import { EVENT_CATEGORY_NAMES, RESPONSE_STATUSES, SESSION_STATES } from "../../../core/vocabulary";
import { responseSummary, sessionSummary, type TTrajectoryScope } from "../../../services/console/audit";
import { responsesPage, sessionsPage, trajectoryPage, trajectoryPeople } from "../../../services/read/console";
import { authenticatedProcedure, router } from "../init";
import { responseTimeline } from "../../../services/read/timeline";

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
const trajectoryOf = (v: { responseId?: string; sessionId?: string }): TTrajectoryScope => (v.responseId ? { responseId: v.responseId } : { sessionId: v.sessionId ?? "" });

/** Searchable response and session lists, one response or session, and trajectory audit. */
export const auditRouter = router({
  responses: authenticatedProcedure
    .input(z.strictObject({ ...ZListFilter, statuses: z.array(z.enum(RESPONSE_STATUSES)).max(RESPONSE_STATUSES.length).optional() }))
    .query(({ ctx, input }) => responsesPage(ctx.deps, ctx.scope, input)),
  sessions: authenticatedProcedure
    .input(z.strictObject({ ...ZListFilter, state: z.enum(SESSION_STATES).optional() }))
    .query(({ ctx, input }) => sessionsPage(ctx.deps, ctx.scope, input)),
  /** One response without its trajectory (the audit timeline pages through that). */
  response: authenticatedProcedure.input(z.strictObject({ responseId: ZId })).query(({ ctx, input }) => responseSummary(ctx.deps, ctx.scope, input.responseId)),
  /** One response as a tree of turns, tool calls and waits for people, with durations and tokens. */
  timeline: authenticatedProcedure.input(z.strictObject({ responseId: ZId })).query(({ ctx, input }) => responseTimeline(ctx.deps, ctx.scope, input.responseId)),
  /** One session: owner, access, its responses and their usage. */
  session: authenticatedProcedure.input(z.strictObject({ sessionId: ZId })).query(({ ctx, input }) => sessionSummary(ctx.deps, ctx.scope, input.sessionId)),
  /** One keyset page of a trajectory, filtered by category, actor and text (server-side). */
  trajectory: authenticatedProcedure.input(ZTrajectoryQuery).query(({ ctx, input }) => trajectoryPage(ctx.deps, ctx.scope, trajectoryOf(input), input)),
  /** The people who caused events in a trajectory, for the actor filter. */
  actors: authenticatedProcedure.input(ZScope).query(({ ctx, input }) => trajectoryPeople(ctx.deps, ctx.scope, trajectoryOf(input))),
});
