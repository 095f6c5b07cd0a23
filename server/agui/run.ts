import { type Event, EventType, type Interrupt } from "@ag-ui/core";
import type { TRequiredAction } from "../core/envelope";
import type { TFrame } from "../core/frames";
import type { TQuestion } from "../core/questions/schema";
import type { TDeps } from "../host/deps";
import { findPending } from "../host/pending/kinds";
import { followFrames } from "../services/follow-frames";
import { aguiMessageId, aguiToolCallId } from "./ids";
import { interruptOf, questionInterrupt } from "./interrupts";

/** Countersign frames passed on as AG-UI `CUSTOM` events (`countersign.<type>`). */
const CUSTOM_FRAMES = new Set(["approval.resolved", "question.resolved", "question.expired", "review.verdict"]);

const json = (value: unknown): string => JSON.stringify(value ?? null) ?? "null";

/**
 * Streams one AG-UI run over a Countersign response: follows its frames after `after` (stored,
 * then live) and maps them to AG-UI events, ending with RUN_FINISHED (success; interrupt for an
 * approval, a client tool or a question; cancelled for a denied or cancelled response) or
 * RUN_ERROR (a failed response). Returns when the run ended or `signal` aborted.
 */
export async function streamRun(
  deps: TDeps,
  run: { threadId: string; runId: string; responseId: string; after: number },
  send: (event: Event) => void,
  signal: AbortSignal,
): Promise<void> {
  const { responseId, threadId, runId } = run;
  let openText: string | null = null;
  /** The assistant text of the current model turn: its tool calls hang off it. */
  let turnText: string | null = null;
  const closeText = () => {
    if (openText) send({ type: EventType.TEXT_MESSAGE_END, messageId: openText });
    openText = null;
  };
  const interrupted = (interrupts: Interrupt[]) => {
    closeText();
    send({ type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: "interrupt", interrupts } });
  };

  for await (const frame of followFrames(deps, responseId, run.after, signal)) {
    switch (frame.type) {
      case "response.text.delta": {
        const id = aguiMessageId(responseId, String(frame.itemId ?? `text_${frame.sequence}`));
        if (openText !== id) {
          closeText();
          send({ type: EventType.TEXT_MESSAGE_START, messageId: id, role: "assistant" });
          openText = id;
          turnText = id;
        }
        const delta = String(frame.delta ?? "");
        if (delta) send({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta });
        break;
      }
      case "response.thinking.delta": {
        closeText();
        const id = aguiMessageId(responseId, String(frame.itemId ?? `reasoning_${frame.sequence}`));
        const delta = String(frame.delta ?? "");
        send({ type: EventType.REASONING_START, messageId: id });
        send({ type: EventType.REASONING_MESSAGE_START, messageId: id, role: "reasoning" });
        if (delta) send({ type: EventType.REASONING_MESSAGE_CONTENT, messageId: id, delta });
        send({ type: EventType.REASONING_MESSAGE_END, messageId: id });
        send({ type: EventType.REASONING_END, messageId: id });
        break;
      }
      case "response.tool_call": {
        closeText();
        const toolCallId = aguiToolCallId(responseId, String(frame.id));
        send({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName: String(frame.name), ...(turnText ? { parentMessageId: turnText } : {}) });
        send({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: json(frame.arguments) });
        send({ type: EventType.TOOL_CALL_END, toolCallId });
        break;
      }
      case "response.tool_result": {
        closeText();
        turnText = null;
        const toolCallId = aguiToolCallId(responseId, String(frame.callId));
        send({ type: EventType.TOOL_CALL_RESULT, messageId: `${toolCallId}.result`, toolCallId, content: json(frame.output), role: "tool" });
        break;
      }
      case "question.requested": {
        // A run-suspending question ends the run at its `requires_action` boundary. A question asked
        // while a tool call is still running (an MCP elicitation, a Gateway question of the run)
        // has no boundary: the AG-UI run ends here with the interrupt while the call waits.
        const asked = frame.question as { id: string; kind: string; questions: TQuestion[]; expiresAt: string } | undefined;
        if (asked?.kind !== "gateway") break;
        const record = await findPending(deps.db, asked.id);
        if (record?.status !== "pending") break;
        interrupted([questionInterrupt(responseId, { id: asked.id, questions: asked.questions, expiresAt: asked.expiresAt, callId: record.callId, kind: record.label })]);
        return;
      }
      case "response.completed": {
        closeText();
        await finish(deps, run, frame, send, interrupted);
        return;
      }
      default:
        if (CUSTOM_FRAMES.has(frame.type)) {
          closeText();
          const { type, sequence: _s, responseId: _r, sessionId: _i, ...value } = frame;
          send({ type: EventType.CUSTOM, name: `countersign.${type}`, value });
        }
    }
  }
}

async function finish(
  deps: TDeps,
  run: { threadId: string; runId: string; responseId: string },
  frame: TFrame,
  send: (event: Event) => void,
  interrupted: (interrupts: Interrupt[]) => void,
): Promise<void> {
  const { threadId, runId, responseId } = run;
  const status = String(frame.status);
  if (status === "requires_action" && frame.requiredAction) {
    interrupted([await interruptOf(deps, responseId, frame.requiredAction as TRequiredAction)]);
    return;
  }
  if (status === "failed") {
    const error = (frame.error ?? {}) as { code?: string; message?: string };
    send({ type: EventType.RUN_ERROR, message: error.message ?? "The run failed.", code: error.code ?? "failed" });
    return;
  }
  const result = { responseId, sessionId: frame.sessionId, status, outputText: String(frame.outputText ?? "") };
  // A denied or cancelled response stopped before it completed; nothing is waited for.
  send({ type: EventType.RUN_FINISHED, threadId, runId, result, outcome: status === "completed" ? { type: "success" } : { type: "cancelled" } });
}
