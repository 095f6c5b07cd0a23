import type { Db } from "../../../db/client";
import { waitingQuestions } from "../../../db/repositories/console-waiting";
import {
  cancelQuestionsOfResponse,
  dueQuestions,
  expireDueQuestion,
  pendingQuestionById,
  questionById,
  type TQuestionRow,
  toRecords,
} from "../../../db/repositories/question-records";
import { releaseHeldRun } from "../../../db/repositories/question-runs";
import type { TNewEvent } from "../../core/frames";
import type { TSettledQuestion } from "../../tools/types";
import type { TDeps } from "../deps";
import { type TAnnounce, type TEmit, transact } from "../transact";
import { lockWaitingOn } from "./approval";
import { resumeWith, type TClaimedRun, type TRunStarter } from "./contract";
import type { TPendingKind } from "./kind";

/**
 * Settles the run that waits on a question, inside the settling transaction. A run suspended on
 * it resumes with the settled result (claimed for `host`); a run whose tool call holds it (an MCP
 * elicitation in flight) goes back to executing, and the holding call reads the answer itself.
 * Null when no run waits on it, or when the hold ended (nothing to start).
 */
export async function settleRunQuestion(
  deps: Pick<TDeps, "config" | "now">,
  host: TRunStarter,
  tx: Db,
  emit: TEmit,
  row: TQuestionRow,
  settled: TSettledQuestion,
  events: readonly TNewEvent[],
): Promise<TClaimedRun | null> {
  if (!row.responseId || !row.callId) {
    if (row.responseId) await emit(row.responseId, events);
    return null;
  }
  const run = await lockWaitingOn(tx, row.responseId, row.id);
  if (!run?.pendingAction) {
    await emit(row.responseId, events);
    return null;
  }
  if (run.pendingAction.hold) {
    await releaseHeldRun(tx, run.id);
    await emit(run.id, events);
    return null;
  }
  const resumed = await resumeWith(deps, host, tx, emit, run.id, { pending: run.pendingAction, settlement: { type: "question", questions: row.questions, settled }, events });
  return resumed.run;
}

/** Tells every listener of a question (waiters, the console, tool calls holding it) that it changed. */
export function announceQuestion(announce: TAnnounce, row: Pick<TQuestionRow, "id" | "responseId">, status: string, resolutionId?: string): void {
  announce({ k: "question", change: { questionId: row.id, status, ...(resolutionId ? { resolutionId } : {}) } });
  announce({ k: "inbox", change: { kind: "question", responseId: row.responseId, id: row.id } });
}

/** A question to a person (asked by a tool, or held by a running tool call): answer, cancel, expire. */
export const questionKind: TPendingKind = {
  type: "question",
  waiting: waitingQuestions,
  find: async (db, id) => {
    const row = await questionById(db, id);
    return row ? { type: "question", id, ownerId: row.userId, responseId: row.responseId, sessionId: row.sessionId, callId: row.callId, status: row.status, label: row.kind } : null;
  },
  actionOf: async (db, id) => {
    const row = await pendingQuestionById(db, id);
    return row ? { type: "question", id: row.id, callId: row.responseId ?? "", questions: row.questions, expiresAt: row.expiresAt.toISOString() } : null;
  },
  due: dueQuestions,
  expire: async (deps, host, id) =>
    transact(deps, async (tx, emit, announce) => {
      const row = await expireDueQuestion(tx, id, deps.now());
      if (!row) return null;
      const [record] = await toRecords(tx, [row]);
      announceQuestion(announce, row, "expired");
      const waitedSeconds = Math.round((row.expiresAt.getTime() - row.createdAt.getTime()) / 1000);
      const settled: TSettledQuestion = { status: "expired", message: `Nobody answered within ${waitedSeconds} ${waitedSeconds === 1 ? "second" : "seconds"}. Continue without the answer, or ask again later.` };
      const events = [{ type: "question.expired", data: { question: record }, frame: true, transport: "system" as const }];
      return { claimed: await settleRunQuestion(deps, host, tx, emit, row, settled, events) };
    }),
  cancelFor: async (tx, _emit, announce, run, _by, now) => {
    const rows = await cancelQuestionsOfResponse(tx, run.id, now);
    for (const r of rows) announceQuestion(announce, r, "cancelled");
  },
};

