import { TRPCError } from "@trpc/server";
import { TRAIL_READER_ROLES } from "../../../core/admin-trail";
import { READ_ALL_ROLES, type TRole } from "../../../core/vocabulary";
import { authenticatedProcedure } from "../init";

/** Limits a procedure to some roles (403 for the others); the check runs before its input is used. */
const onlyRoles = (roles: readonly TRole[], what: string) =>
  authenticatedProcedure.use(({ ctx, next }) => {
    if (!roles.includes(ctx.actor.role)) throw new TRPCError({ code: "FORBIDDEN", message: `Your role cannot ${what}.` });
    return next();
  });

/** Admins only (roles, other users' keys, pairing). */
export const adminProcedure = onlyRoles(["admin"], "administer this workspace");
/** Admins and auditors (the effective configuration). */
export const configReaderProcedure = onlyRoles(["admin", "auditor"], "read the server configuration");
/** Roles that read the whole workspace (auditors included, read-only). */
export const workspaceReaderProcedure = onlyRoles(READ_ALL_ROLES, "read the whole workspace");
/** Admins and auditors: the admin trail (read-only for everyone). */
export const trailReaderProcedure = onlyRoles(TRAIL_READER_ROLES, "read the admin trail");
/** Anyone who may change something: every role but auditor. */
export const writerProcedure = onlyRoles(["member", "operator", "admin"], "change anything (auditors are read-only)");

