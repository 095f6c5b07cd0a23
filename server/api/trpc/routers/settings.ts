import { z } from "zod";
import { LOCALES } from "../../../core/vocabulary";
import { renameUser } from "../../../services/console/user-rename";
import { getUserSettings, setUserLocale } from "../../../services/console/user-settings";
import { authenticatedProcedure, router } from "../init";

/** The signed-in user's own console preferences. */
export const settingsRouter = router({
  /** `{ locale }`: the console's language, or null to follow the browser. */
  get: authenticatedProcedure.query(({ ctx }) => getUserSettings(ctx.deps.db, ctx.actor.userId)),
  /** Chooses the console's language (null: the browser's); kept across sign-ins and devices. */
  setLocale: authenticatedProcedure
    .input(z.strictObject({ locale: z.enum(LOCALES).nullable() }))
    .mutation(({ ctx, input }) => setUserLocale(ctx.deps.db, ctx.actor.userId, input.locale)),
  /**
   * Changes one's own display name (every role): 409 when another user has the same name
   * (ignoring case, letter width and invisible characters); written to the admin trail.
   */
  setName: authenticatedProcedure
    .input(z.strictObject({ name: z.string().max(1000) }))
    .mutation(({ ctx, input }) => renameUser(ctx.deps, ctx.who, { userId: ctx.actor.userId, name: input.name })),
});
