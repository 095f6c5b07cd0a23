import { z } from "zod";
import { ZAdminTrailFilter } from "../../../core/admin-trail";
import { ROLES } from "../../../core/vocabulary";
import { changeRole, createKeyFor, revokeKeyFor } from "../../../services/console/admin";
import { deleteUser, disableUser, enableUser } from "../../../services/console/user-status";
import { adminTrailPage, adminTrailPeople } from "../../../services/console/admin-trail";
import { apiKeysVisible, workspaceUsers } from "../../../services/read/console";
import { authenticatedProcedure, router } from "../init";
import { adminProcedure, trailReaderProcedure, workspaceReaderProcedure, writerProcedure } from "./console-procedures";

const ZId = z.string().min(1).max(200);

const ZUserRef = z.strictObject({ userId: ZId });


/** Users and roles, API keys. Agents: `console.agents`; paired devices: the `devices` router. */
export const adminRouter = router({
  /** Every user and role (workspace readers; auditors read-only). */
  users: workspaceReaderProcedure.query(({ ctx }) => workspaceUsers(ctx.deps)),
  /** Changes a user's role (admins only; not one's own; the last admin stays). */
  setRole: adminProcedure.input(z.strictObject({ userId: ZId, role: z.enum(ROLES) })).mutation(({ ctx, input }) => changeRole(ctx.deps, ctx.who, input)),
  /** Disables a user: keys, console sessions and open connections stop at once (admins only; not oneself, not the last admin). */
  disableUser: adminProcedure.input(ZUserRef).mutation(({ ctx, input }) => disableUser(ctx.deps, ctx.who, input.userId)),
  /** Enables a disabled user again (admins only). */
  enableUser: adminProcedure.input(ZUserRef).mutation(({ ctx, input }) => enableUser(ctx.deps, ctx.who, input.userId)),
  /** Deletes a user's credentials for good; its history keeps its name (admins only; not oneself, not the last admin). */
  deleteUser: adminProcedure.input(ZUserRef).mutation(({ ctx, input }) => deleteUser(ctx.deps, ctx.who, input.userId)),
  /** One page of the admin trail, newest first; `cursor` (a page's `nextCursor`) continues with older rows. Admins and auditors only; nobody edits it. */
  trail: trailReaderProcedure
    .input(z.strictObject({ ...ZAdminTrailFilter, cursor: z.string().max(400).nullish(), limit: z.number().int().min(1).max(200).default(50), direction: z.enum(["forward", "backward"]).optional() }))
    .query(({ ctx, input }) => adminTrailPage(ctx.deps, ctx.actor, input)),
  /** The people who appear as actors in the admin trail (for its actor filter). */
  trailActors: trailReaderProcedure.query(({ ctx }) => adminTrailPeople(ctx.deps, ctx.actor)),
  /** API keys (prefix only, never the key): admins and auditors see all, others their own. */
  apiKeys: authenticatedProcedure.query(({ ctx }) => apiKeysVisible(ctx.deps, ctx.scope)),
  /** Creates a key and returns it once (for oneself; admins for anyone). */
  createApiKey: writerProcedure
    .input(z.strictObject({ name: z.string().trim().min(1).max(100), userId: ZId.optional() }))
    .mutation(({ ctx, input }) => createKeyFor(ctx.deps, ctx.who, input)),
  /** Revokes a key (one's own; admins any). */
  revokeApiKey: writerProcedure.input(z.strictObject({ keyId: ZId })).mutation(({ ctx, input }) => revokeKeyFor(ctx.deps, ctx.who, input.keyId)),
});
