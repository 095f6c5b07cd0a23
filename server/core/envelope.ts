import { z } from "zod";
import type { TResponseStatus, TRisk } from "./vocabulary";

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
]);
export type TOutputItem = z.infer<typeof ZOutputItem>;

export type TUsage = { inputTokens: number; outputTokens: number };

export type TApprovalAction = {
  type: "human_approval";
  id: string;
  callId: string;
  action: string;
  message: string;
  arguments: unknown;
  risk: TRisk;
  expiresAt: string;
  cwd?: string | null;
  reviewer?: string | null;
  reviewerRationale?: string;
  /** Only for a quorum: how many distinct approvers (never the requester) must approve. */
  requiredApprovals?: number;
};

export type TClientToolAction = {
  type: "client_tool";
  id: string;
  callId: string;
  name: string;
  arguments: unknown;
  expiresAt: string;
  privateInput?: true;
  inputSchema?: unknown;
};

export type TQuestionAction = {
  type: "question";
  id: string;
  callId: string;
  questions: unknown[];
  expiresAt: string;
};

export type TRequiredAction = TApprovalAction | TClientToolAction | TQuestionAction;

export type TEnvelope = {
  id: string;
  sessionId: string;
  status: TResponseStatus;
  outputText: string;
  output: TOutputItem[];
  metadata: Record<string, unknown>;
  usage: TUsage;
  requiredAction?: TRequiredAction;
  error?: { code: string; message: string };
};

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
