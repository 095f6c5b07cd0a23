import { visibleQuestion } from "../../../db/repositories/question-records";
import { getResponse } from "../../../db/repositories/responses";
import type { TReadScope } from "../../core/read-scope";
import type { TDeps } from "../../host/deps";
import { answerFileUrl, runFiles } from "./attachments";

/** Long enough to orient, short enough to stay a preview on a phone. */
const PREVIEW_CHARS = 1200;

const clip = (text: string): string => (text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text);

/**
 * What the run was asked to do: `metadata.task` when the caller named it, else a text input, else
 * the last user message of a message-list input; null for a scripted or structured input.
 */
function taskOf(input: unknown, metadata: Record<string, unknown>): string | null {
  if (typeof metadata.task === "string" && metadata.task.trim()) return clip(metadata.task.trim());
  if (typeof input === "string") return input.trim() ? clip(input.trim()) : null;
  if (Array.isArray(input)) {
    for (let i = input.length - 1; i >= 0; i--) {
      const m = input[i] as { role?: unknown; content?: unknown } | null;
      if (m?.role === "user" && typeof m.content === "string" && m.content.trim()) return clip(m.content.trim());
    }
  }
  return null;
}

/** The text of the run's last assistant message so far, if any. */
function lastAssistantText(output: ReadonlyArray<{ type: string; role?: string; content?: unknown }>): string | null {
  for (let i = output.length - 1; i >= 0; i--) {
    const item = output[i];
    if (item?.type !== "message" || item.role !== "assistant" || !Array.isArray(item.content)) continue;
    const text = (item.content as Array<{ type?: string; text?: string }>).map((c) => (c.type === "output_text" ? (c.text ?? "") : "")).join("");
    if (text.trim()) return clip(text.trim());
  }
  return null;
}

/**
 * `question.context`: which agent and task ask this question, and the run's last assistant
 * message, and the files the run was given or attached so far. The agent is named to whoever may
 * see the question; the task, the message and the files only to
 * someone who may read the run itself (its owner, or a role that reads every run).
 */
export async function questionContext(deps: TDeps, scope: TReadScope, questionId: string) {
  const question = await visibleQuestion(deps.db, scope.actor, questionId);
  const run = question.responseId ? await getResponse(deps.db, question.responseId) : null;
  if (!run) return { agent: null, responseId: null, task: null, lastMessage: null, files: [], readable: false };
  const readable = scope.canRead(run.userId);
  return {
    agent: run.agent,
    responseId: readable ? run.id : null,
    task: readable ? taskOf(run.input, run.metadata) : null,
    lastMessage: readable ? lastAssistantText(run.output) : null,
    /** The run's files so far, served to this page's reader by `/api/answer/{questionId}/files/{attachmentId}`. */
    files: readable ? runFiles(run, (id) => answerFileUrl(questionId, id)) : [],
    readable,
  };
}
