import { z } from "zod";
import { listGrants, revokeGrant } from "../../../services/grants";
import { authenticatedProcedure, router } from "../init";

/** Standing grants: the list (active or all) and revocation. */
export const grantsRouter = router({
  list: authenticatedProcedure
    .input(z.strictObject({ status: z.enum(["active", "all"]).default("active") }).default({ status: "active" }))
    .query(({ ctx, input }) => listGrants(ctx.deps, ctx.actor, { status: input.status })),
  revoke: authenticatedProcedure
    .input(z.strictObject({ grantId: z.string().min(1).max(200) }))
    .mutation(({ ctx, input }) => revokeGrant(ctx.deps, ctx.who, input.grantId)),
});
