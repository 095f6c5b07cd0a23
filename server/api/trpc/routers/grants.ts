import { z } from "zod";
import { listGrants, listGrantsPage, revokeGrant } from "../../../services/grants";
import { authenticatedProcedure, router } from "../init";
import { pageInput } from "./page-input";

/** Standing grants: the list (active or all) and revocation. */
export const grantsRouter = router({
  list: authenticatedProcedure
    .input(z.strictObject({ status: z.enum(["active", "all"]).default("active") }).default({ status: "active" }))
    .query(({ ctx, input }) => listGrants(ctx.deps, ctx.actor, { status: input.status })),
  /** One page of the same list, newest first, and the cursor of the next (older) page. */
  page: authenticatedProcedure
    .input(z.strictObject({ status: z.enum(["active", "all"]).default("active"), ...pageInput }).default({ status: "active", limit: 50 }))
    .query(({ ctx, input }) => listGrantsPage(ctx.deps, ctx.scope, input)),
  revoke: authenticatedProcedure
    .input(z.strictObject({ grantId: z.string().min(1).max(200) }))
    .mutation(({ ctx, input }) => revokeGrant(ctx.deps, ctx.who, input.grantId)),
});
