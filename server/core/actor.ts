import { DECIDER_ROLES, READ_ALL_ROLES, type TRole } from "./vocabulary";

/** The authenticated user behind a request, on any transport. */
/** `email` is set where the actor was read from the users table (approver lists may name people by email). */
/** Who acts: the user, its role, its name and email, and its teams (the groups single sign-on gave it). */
export type TActor = { userId: string; role: TRole; name: string; email?: string; groups?: readonly string[] };

/** May this actor see an object owned by `ownerId`? Others' objects must look missing (404). */
export const canRead = (actor: TActor, ownerId: string): boolean =>
  actor.userId === ownerId || READ_ALL_ROLES.includes(actor.role);

/** May this actor decide for an object owned by `ownerId`? */
export const canDecide = (actor: TActor, ownerId: string): boolean =>
  actor.role !== "auditor" && (actor.userId === ownerId || DECIDER_ROLES.includes(actor.role));
