import { z } from "zod";
import { endMySession, mySessions } from "../../../services/console/account";
import { authenticatedProcedure, router } from "../init";

/** The signed-in person's own account: console sessions (the `/account` page). */
export const accountRouter = router({
  /** My console sessions that have not expired: device (user agent), address, began, last refreshed; `current` is this browser's. */
  sessions: authenticatedProcedure.query(({ ctx }) => mySessions(ctx.deps, ctx.actor, ctx.credential)),
  /** Ends one of my sessions (that browser is signed out; its connections close); 404 for any other id. */
  endSession: authenticatedProcedure.input(z.strictObject({ id: z.string().min(1).max(200) })).mutation(({ ctx, input }) => endMySession(ctx.deps, ctx.actor, input.id)),
});
