import type { TActor } from "./actor";
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
export function accessChangeRefusal(actor: TActor, ownerId: string, to: TSessionAccess): string | null {
  if (actor.role === "auditor") return "Auditors cannot change a session's access.";
  if (DECIDER_ROLES.includes(actor.role)) return null;
  if (to === "full") return "Only an operator or an admin can grant Full access; ask one to grant it to this session.";
  return actor.userId === ownerId ? null : "Only the session's owner, an operator or an admin can change its access.";
}
