import type { TActor } from "./actor";
import type { TErrorReason } from "./error-reasons";
import { DECIDER_ROLES } from "./vocabulary";

/** A session's access: `full` lets the device commands its agent declared run without a prompt. */
export const SESSION_ACCESS_LEVELS = ["default", "full"] as const;
export type TSessionAccess = (typeof SESSION_ACCESS_LEVELS)[number];

/**
 * Why `actor` may not set a session owned by `ownerId` to `to`, or null when it may. Full access
 * is granted (and taken back) only by operators and admins, on anyone's session, their own too.
 * An owner may lower its own session to `default`: giving up authority harms no one. Auditors
 * change nothing.
 */
export function accessChangeRefusal(actor: TActor, ownerId: string, to: TSessionAccess): TErrorReason | null {
  if (actor.role === "auditor") return { code: "auditorReadOnly", params: { act: "changeAccess" } };
  if (DECIDER_ROLES.includes(actor.role)) return null;
  if (to === "full") return { code: "rolesOnly", params: { act: "grantFullAccess" } };
  return actor.userId === ownerId ? null : { code: "rolesOnly", params: { act: "changeAccess" } };
}
