import { and, asc, eq, gt, isNull, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { grants } from "../../db/schema";
import { approvalBindingHash } from "../core/binding";
import { DomainError } from "../core/errors";

import type { TApprovedOperation } from "./pending/contract";
type TGrantRow = typeof grants.$inferSelect;

/** The operation an approver edited before approving: what runs instead of what the agent asked. */
export type TApprovedEdit = { arguments: unknown; cwd: string | null; originalArguments: unknown };

/** How an approval ended for the attempt: run (as asked or as edited), or a reply instead of running. */
export type TApprovalOutcome = { edit: TApprovedEdit | null } | { reply: string };

/** Thrown through a device tool's approval path when the approver replied instead. */
export class RepliedInstead extends Error {
  constructor(readonly reply: string) {
    super("The approver replied instead of approving.");
  }
}

/** The tool result the agent receives for a reply: the approver's message; nothing ran. */
export const replyResult = (reply: string) => ({
  denied: true,
  reply,
  note: "An approver denied this call and replied instead; it was not run.",
});

/** The tool result of an edited call tells the agent what ran instead of what it asked. */
export function withEditNotice(result: unknown, requested: unknown, edit: TApprovedEdit): unknown {
  const notice = {
    approverEdit: {
      note: "An approver edited the arguments before approving; the edited call ran instead of the requested one.",
      requestedArguments: requested,
      arguments: edit.arguments,
    },
  };
  if (result !== null && typeof result === "object" && !Array.isArray(result)) return { ...(result as Record<string, unknown>), ...notice };
  return { result, ...notice };
}

/**
 * Checks an approved row against the call being run: the requested operation must be the one the
 * approval was made for (`requestedHash`), and an edited one must still match its own re-bound hash.
 */
export function approvedOutcome(approval: TApprovedOperation, requestedHash: string): TApprovalOutcome {
  const changed = () => new DomainError("binding_changed", "The approved operation no longer matches the pending one; it was not run.");
  if (approval.originalBindingHash === null) {
    if (approval.bindingHash !== requestedHash) throw changed();
    return { edit: null };
  }
  if (approval.originalBindingHash !== requestedHash) throw changed();
  if (approvalBindingHash(approval) !== approval.bindingHash) throw changed();
  return { edit: { arguments: approval.arguments, cwd: approval.cwd, originalArguments: approval.originalArguments } };
}

/**
 * Uses a standing grant for this exact operation, inside the caller's transaction: the oldest
 * active matching grant is locked and counted. A revocation that committed first is seen here (the
 * grant no longer matches); one that comes later waits for this transaction.
 */
export async function claimGrant(
  tx: Db,
  match: { userId: string; agent: string; operationHash: string; sessionId: string; scopes: ReadonlyArray<"session" | "days">; now: Date },
): Promise<TGrantRow | null> {
  const [candidate] = await tx
    .select({ id: grants.id })
    .from(grants)
    .where(
      and(
        eq(grants.userId, match.userId),
        eq(grants.agent, match.agent),
        eq(grants.operationHash, match.operationHash),
        isNull(grants.revokedAt),
        or(
          match.scopes.includes("session") ? and(eq(grants.scope, "session"), eq(grants.sessionId, match.sessionId)) : undefined,
          match.scopes.includes("days") ? and(eq(grants.scope, "days"), gt(grants.expiresAt, match.now)) : undefined,
        ),
      ),
    )
    .orderBy(asc(grants.createdAt))
    .limit(1)
    .for("update");
  if (!candidate) return null;
  const [used] = await tx
    .update(grants)
    .set({ uses: sql`${grants.uses} + 1`, lastUsedAt: match.now })
    .where(and(eq(grants.id, candidate.id), isNull(grants.revokedAt)))
    .returning();
  return used ?? null;
}
