import { ZErrorBody } from "../../core/wire-frames";
import { z } from "zod";
import { ZEnvelope } from "../../core/envelope";
import { ZAttachmentInputs } from "../../core/media";
import { ZGrantRecord } from "../../services/grants";

/** The request and response bodies of the `/v1` routes: what the handlers parse and send, and what the API document shows. */

/** Ids name objects the server minted; any other string is simply unknown (404), so no length cap here (the body's 1 MiB bounds it). */
const ZId = z.string().min(1);

/** `POST /v1/responses`. */
export const ZCreateResponseBody = z.strictObject({
  input: z.union([z.string().min(1, "input must not be empty"), z.record(z.string(), z.unknown())]),
  sessionId: ZId.optional(),
  agent: z.string().min(1).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  stream: z.boolean().optional(),
  attachments: ZAttachmentInputs.optional().describe("Files for the run: new bytes (`name`, `mediaType`, base64 `data`) or media attached before (`mediaId`). Limits and the type allowlist: 413 / 415 / 422."),
});
export const ZClientToolBody = z.strictObject({ output: z.unknown() }).refine((b) => "output" in b, { message: "output is required", path: ["output"] });
export const ZSteerBody = z.strictObject({ text: z.string().trim().min(1, "text must not be empty").max(10_000) });
export const ZSideQuestionBody = z.strictObject({ question: z.string().trim().min(1, "question must not be empty").max(10_000) });
export const ZSideQuestionAnswer = z.object({ id: z.string(), responseId: z.string(), question: z.string(), answer: z.string() });
export const ZCancelBody = z.strictObject({ reason: z.string().max(500).optional() });

export const ZHealth = z.object({ ok: z.literal(true), database: z.enum(["pglite", "postgres"]) });
export const ZReady = z.object({ status: z.literal("ready"), database: z.enum(["pglite", "postgres"]), migrations: z.number().int().describe("Migrations applied") });
export const ZNotReady = ZErrorBody.extend({
  reason: z.enum(["database_unreachable", "database_timeout", "migrations_pending", "draining"]).describe("Why the server is not ready (`draining`: this replica is shutting down and takes no new work)"),
});
export const ZCreatedEnvelope = ZEnvelope.extend({ questionId: z.string().optional().describe("Set when the text answered the run's pending question") });
export const ZSteerQueued = z.object({ id: z.string(), responseId: z.string(), status: z.literal("queued"), sequence: z.number().int() });
export const ZDecided = z.union([
  ZEnvelope.extend({ approvalId: z.string(), grantId: z.string().optional() }).describe("Approved (as asked or edited) or replied to: the run's next envelope"),
  z.object({ id: z.string(), status: z.literal("denied") }).describe("A plain denial"),
]);
export const ZGrantList = z.object({ grants: z.array(ZGrantRecord) });
export const ZClientToolSubmitted = ZEnvelope.extend({ clientToolId: z.string() });
export const ZVoted = z.object({ id: z.string(), status: z.literal("pending"), approvals: z.number().int(), requiredApprovals: z.number().int() });

/** Ids in a query string name objects the server minted; any other string is simply unknown (404), so no length cap here (the request line's size bounds it). */
export const ZQueryId = z.string().min(1);
/** `?sessionId=` of the response routes. */
export const SESSION_ID_QUERY = { in: "query", name: "sessionId", schema: ZQueryId, required: true, description: "The response's session" } as const;

export const ZOpenApiDocument = z.looseObject({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) });
