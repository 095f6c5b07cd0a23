import { z } from "zod";
import { RESPONSE_STATUSES, RISKS, type TResponseStatus } from "./vocabulary";

/** Why a reply attachment was not delivered. */
export const ATTACHMENT_FAILURE_REASONS = ["outside_workspace", "missing", "denied", "too_large", "cancelled", "revoked"] as const;
export type TAttachmentFailureReason = (typeof ATTACHMENT_FAILURE_REASONS)[number];

export const ZOutputItem = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("message"),
    role: z.literal("assistant"),
    content: z.array(z.object({ type: z.literal("output_text"), text: z.string() })),
  }),
  z.object({ type: z.literal("thinking"), text: z.string() }),
  z.object({ type: z.literal("tool_call"), id: z.string(), name: z.string(), arguments: z.unknown() }),
  z.object({ type: z.literal("tool_result"), callId: z.string(), name: z.string(), output: z.unknown() }),
  z.object({ type: z.literal("output"), value: z.unknown() }),
  z
    .object({
      type: z.literal("attachment"),
      id: z.string(),
      name: z.string(),
      mediaType: z.string(),
      size: z.number().int(),
      url: z.string().describe("`/v1/responses/{id}/attachments/{attachmentId}`: answers only to those who may read the response"),
    })
    .describe("A file the agent attached to its answer"),
  z
    .object({
      type: z.literal("attachment_failure"),
      path: z.string(),
      reason: z.enum(ATTACHMENT_FAILURE_REASONS),
      message: z.string(),
    })
    .describe("A file the agent asked to attach that was not delivered, and why"),
]);
export type TOutputItem = z.infer<typeof ZOutputItem>;

export const ZUsage = z.object({ inputTokens: z.number().int(), outputTokens: z.number().int() });
export type TUsage = z.infer<typeof ZUsage>;

export const ZApprovalAction = z.object({
  type: z.literal("human_approval"),
  id: z.string(),
  callId: z.string(),
  action: z.string(),
  message: z.string(),
  arguments: z.unknown(),
  risk: z.enum(RISKS),
  expiresAt: z.string(),
  cwd: z.string().nullable().optional(),
  reviewer: z.string().nullable().optional(),
  reviewerRationale: z.string().optional(),
  /** Only for a quorum: how many distinct approvers (never the requester) must approve. */
  requiredApprovals: z.number().int().optional(),
});
export type TApprovalAction = z.infer<typeof ZApprovalAction>;

export const ZClientToolAction = z.object({
  type: z.literal("client_tool"),
  id: z.string(),
  callId: z.string(),
  name: z.string(),
  arguments: z.unknown(),
  expiresAt: z.string(),
  privateInput: z.literal(true).optional(),
  inputSchema: z.unknown().optional(),
});
export type TClientToolAction = z.infer<typeof ZClientToolAction>;

export const ZQuestionAction = z.object({
  type: z.literal("question"),
  id: z.string(),
  callId: z.string(),
  questions: z.array(z.unknown()),
  expiresAt: z.string(),
});
export type TQuestionAction = z.infer<typeof ZQuestionAction>;

export const ZRequiredAction = z.discriminatedUnion("type", [ZApprovalAction, ZClientToolAction, ZQuestionAction]);
export type TRequiredAction = z.infer<typeof ZRequiredAction>;

/** The wire envelope of a response (`POST /v1/responses`, `GET /v1/responses/{id}`, `response.completed`). */
export const ZEnvelope = z.object({
  id: z.string(),
  sessionId: z.string(),
  status: z.enum(RESPONSE_STATUSES),
  outputText: z.string(),
  output: z.array(ZOutputItem),
  metadata: z.record(z.string(), z.unknown()),
  usage: ZUsage,
  requiredAction: ZRequiredAction.optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
export type TEnvelope = z.infer<typeof ZEnvelope>;

/** The assistant text of a response: its message items' text, joined in order. */
export const outputTextOf = (items: readonly TOutputItem[]): string =>
  items
    .flatMap((item) => (item.type === "message" ? item.content.map((part) => part.text) : []))
    .join("");

/** Builds the wire envelope; non-completed statuses carry no output, as the contract requires. */
export function buildEnvelope(input: {
  id: string;
  sessionId: string;
  status: TResponseStatus;
  output: TOutputItem[];
  metadata: Record<string, unknown>;
  usage: TUsage;
  requiredAction?: TRequiredAction | null;
  error?: { code: string; message: string } | null;
}): TEnvelope {
  const completed = input.status === "completed";
  const envelope: TEnvelope = {
    id: input.id,
    sessionId: input.sessionId,
    status: input.status,
    outputText: completed ? outputTextOf(input.output) : "",
    output: completed ? input.output : [],
    metadata: input.metadata,
    usage: input.usage,
  };
  if (input.status === "requires_action" && input.requiredAction) envelope.requiredAction = input.requiredAction;
  if (input.status === "failed") envelope.error = input.error ?? { code: "failed", message: "The response failed." };
  return envelope;
}
