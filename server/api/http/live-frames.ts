import { z } from "zod";
import { ZDecisionOptions } from "../../core/decision";
import { DOMAIN_ERROR_CODES } from "../../core/errors";
import { ZAttachmentInputs } from "../../core/media";

/** Ids name objects the server minted; any other string is simply unknown (an `error` frame like any unknown id), so no length cap here (the frame's 1 MiB bounds it). */
const ZId = z.string().min(1);

/** The first frame on `/v1/live`. */
export const ZLiveConnect = z.strictObject({ type: z.literal("connect"), sessionId: ZId.optional() });

/** Every later client frame on `/v1/live`. */
export const ZLiveClientFrame = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("response.create"), input: z.union([z.string().min(1), z.record(z.string(), z.unknown())]), requestId: z.string().max(200).optional(), metadata: z.record(z.string(), z.unknown()).optional(), agent: z.string().min(1).optional(), attachments: ZAttachmentInputs.optional() }),
  z.strictObject({ type: z.literal("response.cancel"), responseId: ZId }),
  z.strictObject({ type: z.literal("response.steer"), responseId: ZId, text: z.string().trim().min(1).max(10_000) }),
  z.strictObject({ type: z.literal("approval.decision"), responseId: ZId, approvalId: ZId, decision: z.enum(["approve", "deny"]), ...ZDecisionOptions }),
  z.strictObject({ type: z.literal("client_tool.result"), requestId: ZId, output: z.unknown() }),
  z.strictObject({ type: z.literal("session.close") }),
  // Countersign extension: follow a response from a sequence (e.g. after reconnecting to another replica).
  z.strictObject({ type: z.literal("response.subscribe"), responseId: ZId, after: z.number().int().min(-1).optional() }),
]);

/** Frames only `/v1/live` sends (besides every stream frame of the responses it follows). */
export const ZLiveServerFrame = z.discriminatedUnion("type", [
  z.object({ type: z.literal("session.connected"), sessionId: z.string() }),
  // One vote of a quorum: only the voting socket hears of it; not a stored frame.
  z.object({
    type: z.literal("approval.voted"),
    responseId: z.string(),
    sessionId: z.string(),
    approvalId: z.string(),
    decision: z.enum(["approve", "deny"]),
    status: z.literal("pending"),
    approvals: z.number().int(),
    requiredApprovals: z.number().int(),
  }),
  z.object({
    type: z.literal("error"),
    code: z.enum(DOMAIN_ERROR_CODES),
    detail: z.string(),
    error: z.object({ code: z.enum(DOMAIN_ERROR_CODES), message: z.string() }),
    responseId: z.string().optional(),
    requestId: z.string().optional(),
    retryAfter: z.number().optional(),
  }),
]);
export type TLiveServerFrame = z.infer<typeof ZLiveServerFrame>;

/** Close codes of `/v1/live` and why. */
export const LIVE_CLOSE_CODES = {
  1000: "session.close was sent",
  1008: "the first frame was not a connect frame, the session is unknown, or more than 1024 frames were sent",
  1013: "the user holds as many open streams as allowed (COUNTERSIGN_MAX_STREAMS_PER_USER)",
  4401: "no or bad credentials, or the credential was revoked, signed out, disabled or deleted",
  4403: "a cross-origin socket with a session cookie, or the user's role changed (reconnect)",
} as const;
