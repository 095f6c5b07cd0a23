import { inArray } from "drizzle-orm";
import { z } from "zod";
import { users } from "../../../../db/schema";
import { authenticatedProcedure, router } from "../init";

/** Display names for user ids shown in the console (deciders, trajectory actors). */
export const usersRouter = router({
  names: authenticatedProcedure.input(z.strictObject({ ids: z.array(z.string().min(1)).max(200) })).query(async ({ ctx, input }) => {
    if (input.ids.length === 0) return {} as Record<string, string>;
    const rows = await ctx.deps.db.select({ id: users.id, name: users.name }).from(users).where(inArray(users.id, input.ids));
    return Object.fromEntries(rows.map((r) => [r.id, r.name])) as Record<string, string>;
  }),
});
