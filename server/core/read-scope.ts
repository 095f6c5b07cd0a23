import { type TActor, canRead } from "./actor";
import { READ_ALL_ROLES } from "./vocabulary";

/**
 * What one actor may read, decided once for every transport: its own objects, or everyone's for
 * the roles that read all (operators, admins, auditors). Others' objects look missing (404).
 * WebSocket, SSE, tRPC and AG-UI take their reads through a scope, never through the tables.
 */
export type TReadScope = {
  readonly actor: TActor;
  /** The only user whose objects this scope reads, or null for every user's. */
  readonly userId: string | null;
  /** May this scope read an object owned by `ownerId`? */
  readonly canRead: (ownerId: string) => boolean;
};

export function readScope(actor: TActor): TReadScope {
  return { actor, userId: READ_ALL_ROLES.includes(actor.role) ? null : actor.userId, canRead: (ownerId) => canRead(actor, ownerId) };
}
