import { tracked } from "@trpc/server";
import { requiredActionOf } from "../../../host/pending/kinds";
import { desc, eq } from "drizzle-orm";
import { z } from "zod";
import { trajectoryTail } from "../../../../db/repositories/events";
import { envelopeOf, getResponse } from "../../../../db/repositories/responses";
import { responses, users } from "../../../../db/schema";
import { canRead } from "../../../core/actor";
import { notFound } from "../../../core/errors";
import { READ_ALL_ROLES } from "../../../core/vocabulary";
import { cancelResponse } from "../../../services/cancel-response";
import { steerResponse } from "../../../services/steer-response";
import { followFrames, isTerminalFrame } from "../../../services/follow-frames";
import { authenticatedProcedure, router } from "../init";

/** The most trajectory events `responses.get` returns (the newest ones). */
const TRAJECTORY_TAIL = 1000;

/** Responses: list, one with its trajectory, cancel, and a live frame feed. */
export const responsesRouter = router({
  list: authenticatedProcedure.query(async ({ ctx }) => {
    const seeAll = READ_ALL_ROLES.includes(ctx.actor.role);
    const rows = await ctx.deps.db
      .select({ id: responses.id, sessionId: responses.sessionId, agent: responses.agent, status: responses.status, user: users.name, createdAt: responses.createdAt })
      .from(responses)
      .innerJoin(users, eq(users.id, responses.userId))
      .where(seeAll ? undefined : eq(responses.userId, ctx.actor.userId))
      .orderBy(desc(responses.createdAt))
      .limit(100);
    return rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() }));
  }),
  get: authenticatedProcedure.input(z.strictObject({ responseId: z.string().min(1) })).query(async ({ ctx, input }) => {
    const row = await getResponse(ctx.deps.db, input.responseId);
    if (!row || !canRead(ctx.actor, row.userId)) throw notFound("response", input.responseId);
    const action = row.status === "requires_action" ? await requiredActionOf(ctx.deps.db, row.pendingAction) : null;
    const envelope = row.envelope ?? envelopeOf(row, row.status, action);
    const { events: trajectory, total } = await trajectoryTail(ctx.deps.db, row.id, TRAJECTORY_TAIL);
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
  }),
  /** Steers a message into the running response from the console (run authority). */
  steer: authenticatedProcedure
    .input(z.strictObject({ responseId: z.string().min(1), text: z.string().trim().min(1).max(10_000) }))
    .mutation(async ({ ctx, input }) => steerResponse(ctx.deps, ctx.actor, { responseId: input.responseId, text: input.text, via: "console", authorityKind: "run", assertCurrent: () => true })),
  /** Output-token usage of a session: per response and in total. */
  sessionUsage: authenticatedProcedure.input(z.strictObject({ sessionId: z.string().min(1) })).query(async ({ ctx, input }) => {
    const rows = await ctx.deps.db
      .select({ id: responses.id, userId: responses.userId, usage: responses.usage, createdAt: responses.createdAt })
      .from(responses)
      .where(eq(responses.sessionId, input.sessionId))
      .orderBy(desc(responses.createdAt))
      .limit(1000);
    const visible = rows.filter((r) => canRead(ctx.actor, r.userId));
    if (visible.length === 0) throw notFound("session", input.sessionId);
    return {
      sessionId: input.sessionId,
      outputTokens: visible.reduce((sum, r) => sum + r.usage.outputTokens, 0),
      inputTokens: visible.reduce((sum, r) => sum + r.usage.inputTokens, 0),
      responses: visible.map((r) => ({ id: r.id, ...r.usage, createdAt: r.createdAt.toISOString() })),
    };
  }),
  cancel: authenticatedProcedure.input(z.strictObject({ responseId: z.string().min(1) })).mutation(async ({ ctx, input }) => {
    return (await cancelResponse(ctx.deps, ctx.actor, { responseId: input.responseId, via: "console" })).envelope;
  }),
  /** Live frames of one response, resumable after the last seen sequence. */
  onFrames: authenticatedProcedure
    .input(z.strictObject({ responseId: z.string().min(1), lastEventId: z.string().nullish() }))
    .subscription(async function* ({ ctx, input, signal }) {
      const row = await getResponse(ctx.deps.db, input.responseId);
      if (!row || !canRead(ctx.actor, row.userId)) throw notFound("response", input.responseId);
      const after = input.lastEventId ? Number(input.lastEventId) : -1;
      const abort = new AbortController();
      signal?.addEventListener("abort", () => abort.abort(), { once: true });
      for await (const frame of followFrames(ctx.deps, input.responseId, Number.isInteger(after) ? after : -1, abort.signal)) {
        yield tracked(String(frame.sequence), frame);
        if (isTerminalFrame(frame)) break;
      }
    }),
});
