import { z } from "zod";
import { userNames } from "../../../services/console/user-names";
import { authenticatedProcedure, router } from "../init";

/** Display names for user ids shown in the console (deciders, trajectory actors). */
export const usersRouter = router({
  /** Names of the ids the caller may know (members: itself and who acted on its objects); others are left out. */
  names: authenticatedProcedure
    .input(z.strictObject({ ids: z.array(z.string().min(1)).max(200) }))
    .query(({ ctx, input }) => userNames(ctx.deps.db, ctx.actor, input.ids)),
});
