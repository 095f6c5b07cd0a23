import { z } from "zod";
import { SESSION_ACCESS_LEVELS } from "../../../core/session-access";
import { readSession } from "../../../services/read/sessions";
import { setSessionAccess } from "../../../services/set-session-access";
import { authenticatedProcedure, router } from "../init";

const ZSessionId = z.strictObject({ sessionId: z.string().min(1).max(200) });

/** Agent sessions: their access level (Full access lets declared node commands run without a prompt). */
export const sessionsRouter = router({
  get: authenticatedProcedure.input(ZSessionId).query(({ ctx, input }) => readSession(ctx.deps, ctx.scope, input.sessionId)),
  /** Grants or revokes Full access: operators and admins on any session; an owner may only lower its own. Recorded in the audit log. */
  setAccess: authenticatedProcedure
    .input(ZSessionId.extend({ access: z.enum(SESSION_ACCESS_LEVELS) }))
    .mutation(({ ctx, input }) => setSessionAccess(ctx.deps, ctx.actor, ctx.who.origin, input)),
});
