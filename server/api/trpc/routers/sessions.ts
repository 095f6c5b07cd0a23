import { eq } from "drizzle-orm";
import { z } from "zod";
import { agentSessions } from "../../../../db/schema";
import { canRead } from "../../../core/actor";
import { notFound } from "../../../core/errors";
import { SESSION_ACCESS_LEVELS } from "../../../core/session-access";
import { setSessionAccess } from "../../../services/set-session-access";
import { authenticatedProcedure, router } from "../init";

const ZSessionId = z.strictObject({ sessionId: z.string().min(1).max(200) });

/** Agent sessions: their access level (Full access lets declared node commands run without a prompt). */
export const sessionsRouter = router({
  get: authenticatedProcedure.input(ZSessionId).query(async ({ ctx, input }) => {
    const [session] = await ctx.deps.db.select().from(agentSessions).where(eq(agentSessions.id, input.sessionId));
    if (!session || !canRead(ctx.actor, session.userId)) throw notFound("session", input.sessionId);
    return { id: session.id, userId: session.userId, agent: session.agent, access: session.access, createdAt: session.createdAt.toISOString() };
  }),
  /** Grants or revokes Full access: operators and admins on any session; an owner may only lower its own. Recorded in the audit log. */
  setAccess: authenticatedProcedure
    .input(ZSessionId.extend({ access: z.enum(SESSION_ACCESS_LEVELS) }))
    .mutation(({ ctx, input }) => setSessionAccess(ctx.deps, ctx.actor, input)),
});
