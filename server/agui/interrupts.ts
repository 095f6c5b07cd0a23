import type { Interrupt, ResumeEntry } from "@ag-ui/core";
import { eq } from "drizzle-orm";
import { z } from "zod";
import { approvals, clientToolRequests, questions, responses } from "../../db/schema";
import { type TActor, canRead } from "../core/actor";
import type { TRequiredAction } from "../core/envelope";
import { DomainError, notFound } from "../core/errors";
import { answerKeysOf, type TQuestion, ZAnswers } from "../core/questions/schema";
import type { TDeps } from "../host/deps";
import type { Host } from "../host/host";
import { cancelResponse } from "../services/cancel-response";
import { decideApproval } from "../services/decide-approval";
import { resolveQuestion } from "../services/questions/resolve-question";
import { submitClientToolResult } from "../services/submit-client-tool-result";
import { aguiToolCallId } from "./ids";

/** The answer an approval interrupt expects in `resume[].payload`. */
const APPROVAL_SCHEMA = {
  type: "object",
  properties: { decision: { type: "string", enum: ["approve", "deny"] } },
  required: ["decision"],
  additionalProperties: false,
};

const ZApprovalPayload = z.strictObject({ decision: z.enum(["approve", "deny"]) });
const ZClientToolPayload = z.strictObject({ output: z.unknown() }).refine((p) => "output" in p, { message: "output is required", path: ["output"] });
const ZQuestionPayload = z.strictObject({ answers: ZAnswers });

/** The JSON schema of a question interrupt's answer: `{answers: {"<key>": ["value", ...]}}`. */
function answersSchema(qs: readonly TQuestion[]): Record<string, unknown> {
  const keys = qs.flatMap(answerKeysOf);
  return {
    type: "object",
    properties: {
      answers: {
        type: "object",
        properties: Object.fromEntries(keys.map((k) => [k, { type: "array", items: { type: "string" } }])),
        additionalProperties: false,
      },
    },
    required: ["answers"],
    additionalProperties: false,
  };
}

const questionMessage = (qs: readonly TQuestion[]): string => qs.map((q) => (q.url ? `${q.question} ${q.url}` : q.question)).join("\n");

/** The interrupt of a question (asked by a suspended run, or during a tool call that is still running). */
export function questionInterrupt(responseId: string, q: { id: string; questions: TQuestion[]; expiresAt: string | Date; callId: string | null; kind: string }): Interrupt {
  return {
    id: q.id,
    reason: "question",
    message: questionMessage(q.questions),
    ...(q.callId ? { toolCallId: aguiToolCallId(responseId, q.callId) } : {}),
    responseSchema: answersSchema(q.questions),
    expiresAt: typeof q.expiresAt === "string" ? q.expiresAt : q.expiresAt.toISOString(),
    metadata: { countersign: { type: "question", responseId, kind: q.kind, questions: q.questions, answerPage: `/answer/${q.id}` } },
  };
}

/** The interrupt a `requires_action` boundary ends an AG-UI run with. */
export async function interruptOf(deps: TDeps, responseId: string, action: TRequiredAction): Promise<Interrupt> {
  if (action.type === "human_approval") {
    const [row] = await deps.db.select({ callId: approvals.callId, toolName: approvals.toolName }).from(approvals).where(eq(approvals.id, action.id));
    return {
      id: action.id,
      reason: "human_approval",
      message: action.message,
      ...(row ? { toolCallId: aguiToolCallId(responseId, row.callId) } : {}),
      responseSchema: APPROVAL_SCHEMA,
      expiresAt: action.expiresAt,
      metadata: {
        countersign: {
          type: "human_approval",
          responseId,
          toolName: row?.toolName,
          action: action.action,
          arguments: action.arguments,
          risk: action.risk,
          cwd: action.cwd ?? null,
          ...(action.requiredApprovals ? { requiredApprovals: action.requiredApprovals } : {}),
        },
      },
    };
  }
  if (action.type === "client_tool") {
    const [row] = await deps.db.select({ callId: clientToolRequests.callId }).from(clientToolRequests).where(eq(clientToolRequests.id, action.id));
    return {
      id: action.id,
      reason: "client_tool",
      message: action.privateInput ? `Enter the private input for ${action.name}.` : `Run the client tool ${action.name} and send its output.`,
      ...(row ? { toolCallId: aguiToolCallId(responseId, row.callId) } : {}),
      responseSchema: { type: "object", properties: { output: (action.inputSchema as Record<string, unknown> | undefined) ?? {} }, required: ["output"], additionalProperties: false },
      expiresAt: action.expiresAt,
      metadata: { countersign: { type: "client_tool", responseId, name: action.name, arguments: action.arguments, privateInput: action.privateInput === true } },
    };
  }
  const [row] = await deps.db.select().from(questions).where(eq(questions.id, action.id));
  return questionInterrupt(responseId, {
    id: action.id,
    questions: (row?.questions ?? action.questions) as TQuestion[],
    expiresAt: action.expiresAt,
    callId: row?.callId ?? null,
    kind: row?.kind ?? "question",
  });
}

type TTarget =
  | { kind: "approval"; id: string; responseId: string; status: string; sessionId: string }
  | { kind: "client_tool"; id: string; responseId: string; status: string; sessionId: string }
  | { kind: "question"; id: string; responseId: string; status: string; sessionId: string | null };

/** Finds what a resume entry answers; others' objects look missing. */
async function targetOf(deps: TDeps, actor: TActor, id: string): Promise<TTarget> {
  if (id.startsWith("approval_")) {
    const [row] = await deps.db.select().from(approvals).where(eq(approvals.id, id));
    if (row && canRead(actor, row.userId)) return { kind: "approval", id, responseId: row.responseId, status: row.status, sessionId: row.sessionId };
  } else if (id.startsWith("client_tool_")) {
    const [row] = await deps.db.select().from(clientToolRequests).where(eq(clientToolRequests.id, id));
    if (row && canRead(actor, row.userId)) return { kind: "client_tool", id, responseId: row.responseId, status: row.status, sessionId: row.sessionId };
  } else {
    const [row] = await deps.db.select().from(questions).where(eq(questions.id, id));
    if (row?.responseId && canRead(actor, row.userId)) return { kind: "question", id, responseId: row.responseId, status: row.status, sessionId: row.sessionId };
  }
  throw notFound("interrupt", id);
}

const payloadError = (id: string, error: z.ZodError): DomainError =>
  new DomainError("invalid_request", `Invalid resume payload for ${id}: ${error.issues.map((i) => `${i.path.join(".") || "payload"}: ${i.message}`).join("; ")}.`);

/**
 * Applies the resume entries of a run that continues from interrupts, through the same services
 * as every other transport (each decision, result or answer is used exactly once). All entries
 * must answer interrupts of one response of this thread. Returns that response and the frame
 * sequence to follow from. An entry that cancels an interrupt that is already settled is a no-op.
 * The thread is the caller's own, so its approvals are decided by their requester: the agent's
 * selfApproval rule applies, and a quorum approval is refused (it needs other people).
 */
export async function applyResume(
  deps: TDeps & { host: Host },
  actor: TActor,
  sessionId: string,
  entries: readonly ResumeEntry[],
): Promise<{ responseId: string; after: number }> {
  const targets = await Promise.all(entries.map((e) => targetOf(deps, actor, e.interruptId)));
  const responseIds = new Set(targets.map((t) => t.responseId));
  const [responseId] = [...responseIds];
  if (!responseId || responseIds.size !== 1) throw new DomainError("invalid_request", "resume: every entry must answer an interrupt of the same run.");
  if (targets.some((t) => t.sessionId !== sessionId)) throw new DomainError("invalid_request", "resume: the interrupt does not belong to this thread.");
  // Validate every payload before anything is applied.
  const plans = entries.map((entry, i) => {
    const target = targets[i] as TTarget;
    if (entry.status === "cancelled") return { target, entry, payload: null };
    const schema = target.kind === "approval" ? ZApprovalPayload : target.kind === "client_tool" ? ZClientToolPayload : ZQuestionPayload;
    const parsed = schema.safeParse(entry.payload ?? {});
    if (!parsed.success) throw payloadError(entry.interruptId, parsed.error);
    return { target, entry, payload: parsed.data as Record<string, unknown> };
  });
  const [row] = await deps.db.select({ nextFrameSeq: responses.nextFrameSeq }).from(responses).where(eq(responses.id, responseId));
  const after = (row?.nextFrameSeq ?? 1) - 1;
  for (const { target, payload } of plans) {
    // Cancelling what is no longer pending changes nothing.
    if (payload === null && target.status !== "pending") continue;
    if (target.kind === "approval") {
      await decideApproval(deps, actor, { approvalId: target.id, decision: payload === null ? "deny" : (payload.decision as "approve" | "deny"), via: "http", expectedResponseId: responseId });
    } else if (target.kind === "client_tool") {
      if (payload === null) await cancelResponse(deps, actor, { responseId, reason: "The client cancelled the tool call.", via: "http" });
      else await submitClientToolResult(deps, actor, { requestId: target.id, output: payload.output, via: "http" });
    } else if (payload === null) await resolveQuestion(deps, actor, { id: target.id, cancel: true, via: "http" });
    else await resolveQuestion(deps, actor, { id: target.id, answers: payload.answers as z.infer<typeof ZAnswers>, via: "http" });
  }
  return { responseId, after };
}
