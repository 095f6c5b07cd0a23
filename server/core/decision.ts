import { createHash } from "node:crypto";
import { z } from "zod";
import { canonicalJson } from "./binding";

/** `"session"`: this exact operation for the rest of the session; `{days}`: for N days (≤ the agent's maximum). */
export const ZGrantRequest = z.union([z.literal("session"), z.strictObject({ days: z.number().int().min(1).max(3650) })], {
  error: 'grant must be "session" or {"days": N} with N a whole number of days ≥ 1',
});
export type TGrantRequest = z.infer<typeof ZGrantRequest>;

/**
 * What a decision may carry besides approve/deny, on every transport (HTTP body, WebSocket
 * frame, console): an edit of the arguments, a reply instead of a plain denial, a standing grant.
 * Which combinations are allowed is checked by the decide service, so every transport agrees.
 */
export const ZDecisionOptions = {
  arguments: z.record(z.string(), z.unknown(), { error: "arguments must be a JSON object (the edited tool arguments)" }).optional(),
  message: z.string().max(4000, "message must be at most 4000 characters").optional(),
  grant: ZGrantRequest.optional(),
};

export const ZDecisionBody = z.strictObject({ decision: z.enum(["approve", "deny"]), ...ZDecisionOptions });

/**
 * What a standing grant is bound to: the same action with the same arguments (argument hash) in the
 * same user's runs of one agent. A working directory given in the arguments is part of them; the
 * session's own workspace (when none is given) is not, so a days grant covers each session's workspace.
 */
export type TOperation = { userId: string; agent: string; action: string; arguments: unknown };

export const operationHash = (operation: TOperation): string => createHash("sha256").update(canonicalJson(operation)).digest("hex");
