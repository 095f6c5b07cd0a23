import type { Interrupt, ResumeEntry } from "@ag-ui/core";
import { z } from "zod";
import { type TActor, canRead } from "../core/actor";
import type { TApprovalAction, TClientToolAction, TQuestionAction, TRequiredAction } from "../core/envelope";
import type { TPendingType } from "../core/pending";
import { DomainError, notFound } from "../core/errors";
import { answerKeysOf, type TQuestion, ZAnswers } from "../core/questions/schema";
import type { TDeps, TRunDeps } from "../host/deps";
import type { TPendingRecord } from "../host/pending/kind";
import { findPending } from "../host/pending/kinds";
import { cancelResponse } from "../services/cancel-response";
import { lastSequenceOf } from "../services/read/responses";
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

/** What differs between the kinds' interrupts; the id, the tool call and the expiry are common. */
type TInterruptBody = Omit<Interrupt, "id" | "toolCallId" | "expiresAt">;

/** An interrupt of the pending action `id` of a response, answering its tool call `callId` (when it has one). */
const interruptOfParts = (responseId: string, common: { id: string; callId: string | null; expiresAt: string | Date }, body: TInterruptBody): Interrupt => ({
  id: common.id,
  ...body,
  ...(common.callId ? { toolCallId: aguiToolCallId(responseId, common.callId) } : {}),
  expiresAt: typeof common.expiresAt === "string" ? common.expiresAt : common.expiresAt.toISOString(),
});

const questionBody = (responseId: string, q: { id: string; questions: TQuestion[]; kind: string }): TInterruptBody => ({
  reason: "question",
  message: questionMessage(q.questions),
  responseSchema: answersSchema(q.questions),
  metadata: { countersign: { type: "question", responseId, kind: q.kind, questions: q.questions, answerPage: `/answer/${q.id}` } },
});

/** The interrupt of a question (asked by a suspended run, or during a tool call that is still running). */
export function questionInterrupt(responseId: string, q: { id: string; questions: TQuestion[]; expiresAt: string | Date; callId: string | null; kind: string }): Interrupt {
  return interruptOfParts(responseId, q, questionBody(responseId, q));
}

/** What AG-UI says and accepts for one kind of pending action: its interrupt, its resume payload, and how a resume settles it. */
type TAguiKind = {
  /** The kind's own part of its interrupt (the id, tool call and expiry are added for every kind). */
  interrupt: (responseId: string, record: TPendingRecord, action: TRequiredAction) => TInterruptBody;
  payload: z.ZodType<Record<string, unknown>>;
  /** Settles the pending action with a validated payload, or cancels it (`null`), through the same service every transport uses. */
  settle: (deps: TRunDeps, actor: TActor, record: TPendingRecord, payload: Record<string, unknown> | null, responseId: string) => Promise<unknown>;
};

/** Every kind of pending action as AG-UI sees it; a new kind without an entry here is a type error. */
const AGUI_KINDS: Record<TPendingType, TAguiKind> = {
  approval: {
    interrupt: (responseId, record, action) => {
      const a = action as TApprovalAction;
      return {
        reason: "human_approval",
        message: a.message,
        responseSchema: APPROVAL_SCHEMA,
        metadata: {
          countersign: {
            type: "human_approval",
            responseId,
            toolName: record.label,
            action: a.action,
            arguments: a.arguments,
            risk: a.risk,
            cwd: a.cwd ?? null,
            ...(a.requiredApprovals ? { requiredApprovals: a.requiredApprovals } : {}),
          },
        },
      };
    },
    payload: ZApprovalPayload,
    settle: (deps, actor, record, payload, responseId) =>
      decideApproval(deps, actor, { approvalId: record.id, decision: payload === null ? "deny" : (payload.decision as "approve" | "deny"), via: "http", expectedResponseId: responseId }),
  },
  client_tool: {
    interrupt: (responseId, _record, action) => {
      const a = action as TClientToolAction;
      return {
        reason: "client_tool",
        message: a.privateInput ? `Enter the private input for ${a.name}.` : `Run the client tool ${a.name} and send its output.`,
        responseSchema: { type: "object", properties: { output: (a.inputSchema as Record<string, unknown> | undefined) ?? {} }, required: ["output"], additionalProperties: false },
        metadata: { countersign: { type: "client_tool", responseId, name: a.name, arguments: a.arguments, privateInput: a.privateInput === true } },
      };
    },
    payload: ZClientToolPayload,
    settle: (deps, actor, record, payload, responseId) =>
      payload === null
        ? cancelResponse(deps, actor, { responseId, reason: "The client cancelled the tool call.", via: "http" })
        : submitClientToolResult(deps, actor, { requestId: record.id, output: payload.output, via: "http" }),
  },
  question: {
    interrupt: (responseId, record, action) => questionBody(responseId, { id: action.id, questions: (action as TQuestionAction).questions as TQuestion[], kind: record.label }),
    payload: ZQuestionPayload,
    settle: (deps, actor, record, payload) =>
      payload === null
        ? resolveQuestion(deps, actor, { id: record.id, cancel: true, via: "http" })
        : resolveQuestion(deps, actor, { id: record.id, answers: payload.answers as z.infer<typeof ZAnswers>, via: "http" }),
  },
};

/** The interrupt a `requires_action` boundary ends an AG-UI run with. */
export async function interruptOf(deps: TDeps, responseId: string, action: TRequiredAction): Promise<Interrupt> {
  const record = (await findPending(deps.db, action.id)) ?? { type: pendingTypeOf(action), id: action.id, ownerId: "", responseId, sessionId: null, callId: null, status: "pending", label: "" };
  return interruptOfParts(responseId, { id: action.id, callId: record.callId, expiresAt: action.expiresAt }, AGUI_KINDS[record.type].interrupt(responseId, record, action));
}

/** The pending kind behind a wire `requiredAction` (used only when its row is gone). */
const pendingTypeOf = (action: TRequiredAction): TPendingType => (action.type === "human_approval" ? "approval" : action.type);

/** Finds what a resume entry answers; others' objects look missing. */
async function targetOf(deps: TDeps, actor: TActor, id: string): Promise<TPendingRecord & { responseId: string }> {
  const record = await findPending(deps.db, id);
  if (record?.responseId && canRead(actor, record.ownerId)) return { ...record, responseId: record.responseId };
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
  deps: TRunDeps,
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
    const target = targets[i] as TPendingRecord;
    if (entry.status === "cancelled") return { target, payload: null };
    const parsed = AGUI_KINDS[target.type].payload.safeParse(entry.payload ?? {});
    if (!parsed.success) throw payloadError(entry.interruptId, parsed.error);
    return { target, payload: parsed.data };
  });
  const after = await lastSequenceOf(deps, responseId);
  for (const { target, payload } of plans) {
    // Cancelling what is no longer pending changes nothing.
    if (payload === null && target.status !== "pending") continue;
    await AGUI_KINDS[target.type].settle(deps, actor, target, payload, responseId);
  }
  return { responseId, after };
}
