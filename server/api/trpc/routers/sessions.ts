import { eq } from "drizzle-orm";
import { z } from "zod";
import { agentSessions } from "../../../../db/schema";
import { canRead } from "../../../core/actor";
import { DomainError, notFound } from "../../../core/errors";
import { authenticatedProcedure, router } from "../init";

const ZSessionId = z.strictObject({ sessionId: z.string().min(1).max(200) });

/** Agent sessions: their access level (Full access lets declared node commands run without a prompt). */
export const sessionsRouter = router({
  get: authenticatedProcedure.input(ZSessionId).query(async ({ ctx, input }) => {
    const [session] = await ctx.deps.db.select().from(agentSessions).where(eq(agentSessions.id, input.sessionId));
    if (!session || !canRead(ctx.actor, session.userId)) throw notFound("session", input.sessionId);
    return { id: session.id, userId: session.userId, agent: session.agent, access: session.access, createdAt: session.createdAt.toISOString() };
  }),
  /** Sets a session's access; only its owner or an admin may. */
  setAccess: authenticatedProcedure.input(ZSessionId.extend({ access: z.enum(["default", "full"]) })).mutation(async ({ ctx, input }) => {
    const [session] = await ctx.deps.db.select().from(agentSessions).where(eq(agentSessions.id, input.sessionId));
    if (!session || !canRead(ctx.actor, session.userId)) throw notFound("session", input.sessionId);
    if (ctx.actor.role === "auditor" || (session.userId !== ctx.actor.userId && ctx.actor.role !== "admin")) {
      throw new DomainError("forbidden", "Only the session's owner or an admin can change its access.");
    }
    await ctx.deps.db.update(agentSessions).set({ access: input.access }).where(eq(agentSessions.id, session.id));
    ctx.deps.log.info({ sessionId: session.id, access: input.access, by: ctx.actor.userId }, "session access changed");
    return { sessionId: session.id, access: input.access };
  }),
});
