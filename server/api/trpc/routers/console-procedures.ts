import { TRAIL_READER_ROLES } from "../../../core/admin-trail";
import type { TRoleAct } from "../../../core/error-reasons";
import { refused } from "../../../core/errors";
import { READ_ALL_ROLES, type TRole } from "../../../core/vocabulary";
import { authenticatedProcedure } from "../init";

/** Limits a procedure to some roles (403 for the others); the check runs before its input is used. */
const onlyRoles = (roles: readonly TRole[], act: TRoleAct) =>
  authenticatedProcedure.use(({ ctx, next }) => {
    if (!roles.includes(ctx.actor.role)) throw refused("forbidden", { code: "roleCannot", params: { act } });
    return next();
  });

/** Admins only (roles, other users' keys, pairing). */
export const adminProcedure = onlyRoles(["admin"], "administer");
/** Admins and auditors (the effective configuration). */
export const configReaderProcedure = onlyRoles(["admin", "auditor"], "readConfig");
/** Roles that read the whole workspace (auditors included, read-only). */
export const workspaceReaderProcedure = onlyRoles(READ_ALL_ROLES, "readWorkspace");
/** Admins and auditors: the admin trail (read-only for everyone). */
export const trailReaderProcedure = onlyRoles(TRAIL_READER_ROLES, "readTrail");
/** Anyone who may change something: every role but auditor. */
export const writerProcedure = onlyRoles(["member", "operator", "admin"], "change");

