import { approvalBindingHash } from "../core/binding";
import { DomainError } from "../core/errors";
import type { TApprovedOperation } from "./pending/contract";

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

/** Uses a standing grant for this exact operation, inside the caller's transaction (see the repository). */
export { claimGrant } from "../../db/repositories/grants";
