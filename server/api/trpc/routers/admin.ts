import { z } from "zod";
import { ZAdminTrailFilter } from "../../../core/admin-trail";
import { DomainError } from "../../../core/errors";
import { ROLES } from "../../../core/vocabulary";
import { changeRole, createKeyFor, revokeKeyFor } from "../../../services/console/admin";
import { renameUser } from "../../../services/console/user-rename";
import { setUserTeams } from "../../../services/console/user-teams";
import { deleteUser, disableUser, enableUser, offboardUser } from "../../../services/console/user-status";
import { adminTrailPage, adminTrailPeople } from "../../../services/console/admin-trail";
import { apiKeysPage, apiKeysVisible, workspaceUsers, workspaceUsersPage } from "../../../services/read/console";
import { authenticatedProcedure, router } from "../init";
import { adminProcedure, configReaderProcedure, trailReaderProcedure, workspaceReaderProcedure, writerProcedure } from "./console-procedures";
import { ZPageOnly } from "./page-input";

const ZId = z.string().min(1).max(200);

const ZUserRef = z.strictObject({ userId: ZId });

/** Users and roles, API keys. Agents: `console.agents`; paired devices: the `devices` router. */
export const adminRouter = router({
  /** The loaded plugins: id, version, the plugin API range, where it lives, its harnesses, agents and middleware. */
  plugins: workspaceReaderProcedure.query(({ ctx }) => ctx.deps.plugins.map((p) => ({ ...p, harnesses: [...p.harnesses], agents: [...p.agents], middleware: p.middleware.map((m) => [...m]) }))),
  /** Every user and role (workspace readers; auditors read-only). */
  users: workspaceReaderProcedure.query(({ ctx }) => workspaceUsers(ctx.deps)),
  /** One page of users, newest first, and the cursor of the next (older) page (workspace readers). */
  usersPage: workspaceReaderProcedure.input(ZPageOnly).query(({ ctx, input }) => workspaceUsersPage(ctx.deps, input)),
  /** Changes a user's role (admins only; not one's own; the last admin stays). */
  setRole: adminProcedure.input(z.strictObject({ userId: ZId, role: z.enum(ROLES) })).mutation(({ ctx, input }) => changeRole(ctx.deps, ctx.who, input)),
  /**
   * Renames a user (admins; anyone renames oneself with `settings.setName`): 409 when another user
   * has the same display name (ignoring case, letter width and invisible characters); a trail row.
   */
  renameUser: adminProcedure.input(z.strictObject({ userId: ZId, name: z.string().max(1000) })).mutation(({ ctx, input }) => renameUser(ctx.deps, ctx.who, input)),
  /** Sets the teams of a person who signs in with a password (single sign-on writes a person's from the provider's groups); a trail row when they change. Admins only. */
  setUserTeams: adminProcedure
    .input(z.strictObject({ userId: ZId, teams: z.array(z.string().max(1000)).max(1000) }))
    .mutation(({ ctx, input }) => setUserTeams(ctx.deps, ctx.who, input)),
  /** Disables a user: keys, console sessions and open connections stop at once (admins only; not oneself, not the last admin). */
  disableUser: adminProcedure.input(ZUserRef).mutation(({ ctx, input }) => disableUser(ctx.deps, ctx.who, input.userId)),
  /** Enables a disabled user again (admins only). */
  enableUser: adminProcedure.input(ZUserRef).mutation(({ ctx, input }) => enableUser(ctx.deps, ctx.who, input.userId)),
  /** Offboards a user who left: disabled, console sessions ended, keys revoked for good, connections closed; one trail row (admins only; not oneself, not the last admin). */
  offboardUser: adminProcedure.input(ZUserRef).mutation(({ ctx, input }) => offboardUser(ctx.deps, ctx.who, input.userId)),
  /** Deletes a user's credentials for good; its history keeps its name (admins only; not oneself, not the last admin). */
  deleteUser: adminProcedure.input(ZUserRef).mutation(({ ctx, input }) => deleteUser(ctx.deps, ctx.who, input.userId)),
  /** One page of the admin trail, newest first; `cursor` (a page's `nextCursor`) continues with older rows. Admins and auditors only; nobody edits it. */
  trail: trailReaderProcedure
    .input(z.strictObject({ ...ZAdminTrailFilter, cursor: z.string().max(400).nullish(), limit: z.number().int().min(1).max(200).default(50), direction: z.enum(["forward", "backward"]).optional() }))
    .query(({ ctx, input }) => adminTrailPage(ctx.deps, ctx.actor, input)),
  /** The people who appear as actors in the admin trail (for its actor filter). */
  trailActors: trailReaderProcedure.query(({ ctx }) => adminTrailPeople(ctx.deps, ctx.actor)),
  /** The effective agents configuration (COUNTERSIGN_AGENTS_FILE as validated, secrets redacted): admins and auditors. */
  agentsConfig: configReaderProcedure.query(({ ctx }) => {
    if (!ctx.deps.agentsConfig) throw new DomainError("not_found", "This server has no reloadable configuration.");
    return ctx.deps.agentsConfig.effective();
  }),
  /**
   * Re-reads COUNTERSIGN_AGENTS_FILE (admins only): the next runs use it, runs already started keep
   * their policy. An invalid file changes nothing and the answer carries the error (`ok: false`).
   */
  reloadAgents: adminProcedure.mutation(({ ctx }) => {
    if (!ctx.deps.agentsConfig) throw new DomainError("not_found", "This server has no reloadable configuration.");
    return ctx.deps.agentsConfig.reload({ who: ctx.who, via: "trpc" });
  }),
  /** API keys (prefix only, never the key): admins and auditors see all, others their own. */
  apiKeys: authenticatedProcedure.query(({ ctx }) => apiKeysVisible(ctx.deps, ctx.scope)),
  /** One page of the API keys the caller sees, newest first, and the next page's cursor. */
  apiKeysPage: authenticatedProcedure.input(ZPageOnly).query(({ ctx, input }) => apiKeysPage(ctx.deps, ctx.scope, input)),
  /** Creates a key and returns it once (for oneself; admins for anyone). */
  createApiKey: writerProcedure
    .input(z.strictObject({ name: z.string().trim().min(1).max(100), userId: ZId.optional() }))
    .mutation(({ ctx, input }) => createKeyFor(ctx.deps, ctx.who, input)),
  /** Revokes a key (one's own; admins any). */
  revokeApiKey: writerProcedure.input(z.strictObject({ keyId: ZId })).mutation(({ ctx, input }) => revokeKeyFor(ctx.deps, ctx.who, input.keyId)),
});
