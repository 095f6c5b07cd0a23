import { z } from "zod";
import { ZApprovalAction, ZClientToolAction, ZEnvelope } from "./envelope";
import { DOMAIN_ERROR_CODES } from "./errors";
import { ZQuestionRecord } from "./questions/record";

/**
 * The frames a response streams (SSE `data:`, `/v1/live`, tRPC), as the API document shows them.
 * Every frame carries `type`, `sequence`, `responseId`, `sessionId` (and `requestId` on `/v1/live`
 * when `response.create` gave one); frames are open objects, so a client ignores fields it does not know.
 */
const frame = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.looseObject({ type: z.literal(type), sequence: z.number().int().min(0), responseId: z.string(), sessionId: z.string(), requestId: z.string().optional(), ...shape });

const ZSteerId = z.string();

export const ZStreamFrame = z.discriminatedUnion("type", [
  frame("response.created", { metadata: z.record(z.string(), z.unknown()) }),
  frame("response.text.delta", { delta: z.string(), itemId: z.string().optional(), occurrenceId: z.string().optional() }),
  frame("response.thinking.delta", { delta: z.string(), itemId: z.string().optional(), occurrenceId: z.string().optional() }),
  frame("response.tool_call", { id: z.string(), name: z.string(), arguments: z.unknown() }),
  frame("response.tool_result", { callId: z.string(), name: z.string(), output: z.unknown() }),
  frame("response.usage", { outputTokens: z.number().int(), totalOutputTokens: z.number().int() }),
  frame("approval.requested", { approval: ZApprovalAction }),
  frame("approval.resolved", {
    approvalId: z.string(),
    decision: z.enum(["approve", "deny"]),
    message: z.string().optional(),
    edited: z.object({ originalArguments: z.unknown(), arguments: z.unknown(), bindingHash: z.string() }).optional(),
  }),
  frame("client_tool.requested", { clientTool: ZClientToolAction }),
  frame("question.requested", { question: ZQuestionRecord }),
  frame("question.resolved", { question: ZQuestionRecord }),
  frame("question.expired", { question: ZQuestionRecord }),
  frame("review.verdict", { callId: z.string(), toolName: z.string().optional() }),
  frame("steer.queued", { steerId: ZSteerId, authorityKind: z.enum(["run", "source-bound"]), chars: z.number().int() }),
  frame("steer.committed", { steerId: ZSteerId, turn: z.number().int() }),
  frame("steer.rejected", { steerId: ZSteerId, turn: z.number().int().optional(), reason: z.string() }),
  frame("steer.cancelled", { steerId: ZSteerId }),
  frame("error", { error: z.object({ code: z.string(), message: z.string() }) }),
  // The envelope, keyed `responseId` like every frame (its `id` is the same response id).
  frame("response.completed", ZEnvelope.shape),
]);
export type TStreamFrame = z.infer<typeof ZStreamFrame>;

/** `{"detail","code"}`: every `/v1` error body, and the `code`/`detail` of a `/v1/live` error frame. */
export const ZErrorBody = z.object({ detail: z.string(), code: z.enum(DOMAIN_ERROR_CODES) });
export type TErrorBody = z.infer<typeof ZErrorBody>;
