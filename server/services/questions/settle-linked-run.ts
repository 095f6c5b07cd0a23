import { and, eq } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { responseSteps, responses } from "../../../db/schema";
import { findAgent } from "../../agents/config";
import type { TEmit } from "../../host/transact";
import type { TSettledQuestion } from "../../tools/types";
import type { TQuestionRow } from "./records";

/**
 * When a run is suspended on this question, records the tool result the agent will see (as the
 * question tool presents it) and moves the run back to executing, in the caller's transaction.
 * Returns false when no run waits on it.
 */
export async function settleLinkedRun(tx: Db, emit: TEmit, row: TQuestionRow, settled: TSettledQuestion, now: Date): Promise<boolean> {
  if (!row.responseId || !row.callId || row.kind === "gateway") return false;
  const [run] = await tx
    .update(responses)
    .set({ status: "in_progress" })
    .where(and(eq(responses.id, row.responseId), eq(responses.status, "requires_action")))
    .returning();
  if (!run) return false;
  const call = run.output.find((i) => i.type === "tool_call" && i.id === row.callId);
  const name = call?.type === "tool_call" ? call.name : "ask_user";
  const tool = findAgent(run.agent)?.tools.find((t) => t.name === name);
  const output = tool?.kind === "question" ? tool.present(call?.type === "tool_call" ? call.arguments : {}, row.questions, settled) : settled;
  await tx.update(responses).set({ output: [...run.output, { type: "tool_result", callId: row.callId, name, output }] }).where(eq(responses.id, run.id));
  await tx.insert(responseSteps).values({ responseId: run.id, key: `tool:${row.callId}`, status: "completed", result: output, completedAt: now });
  await emit(run.id, [{ type: "response.tool_result", data: { callId: row.callId, name, output }, frame: true }]);
  return true;
}
