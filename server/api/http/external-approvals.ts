import { z } from "zod";
import { DomainError } from "../../core/errors";
import { RISKS } from "../../core/vocabulary";

/** Wire schemas of the external approval routes (`POST /v1/approvals`, wait, consume, list). */

export const ZConsumeBody = z.strictObject({ bindingHash: z.string().regex(/^[0-9a-f]{64}$/, "bindingHash must be 64 lowercase hex digits") });

/** One approval as `GET /v1/approvals` lists it (the console's read: requester, decider, options). */
export const ZApprovalListItem = z.looseObject({
  id: z.string(),
  responseId: z.string(),
  sessionId: z.string(),
  agent: z.string(),
  user: z.string().nullable().describe("The requester's name"),
  action: z.string(),
  toolName: z.string(),
  message: z.string(),
  arguments: z.unknown(),
  risk: z.enum(RISKS),
  bindingHash: z.string(),
  status: z.string(),
  expiresAt: z.string(),
  createdAt: z.string(),
});
export const ZApprovalList = z.object({ approvals: z.array(ZApprovalListItem) });

/** `?wait=MS`: a whole number of milliseconds (0: answer at once), of any size; the server waits at most its boundary timeout. */
export function parseWait(raw: string | null): number {
  if (raw === null || raw === "") return 0;
  if (!/^\d+$/.test(raw)) throw new DomainError("invalid_request", "wait must be a whole number of milliseconds.");
  return Math.min(Number(raw), Number.MAX_SAFE_INTEGER);
}

/** `?status=`: `pending` (default) or `decided`. */
export function parseListStatus(raw: string | null): "pending" | "decided" {
  const status = raw ?? "pending";
  if (status !== "pending" && status !== "decided") throw new DomainError("invalid_request", 'status must be "pending" or "decided".');
  return status;
}
