import type { Db } from "../client";
import { prepared, rawSlot } from "../prepared";
import { gatePasses } from "../schema";

export type TGatePass = Omit<typeof gatePasses.$inferInsert, "createdAt">;

const inserting = prepared<Record<string, unknown>, unknown>("insert_gate_pass", (db) =>
  db
    .insert(gatePasses)
    .values({
      id: rawSlot("id"),
      responseId: rawSlot("responseId"),
      sessionId: rawSlot("sessionId"),
      userId: rawSlot("userId"),
      agent: rawSlot("agent"),
      callId: rawSlot("callId"),
      toolName: rawSlot("toolName"),
      action: rawSlot("action"),
      arguments: rawSlot("arguments"),
      cwd: rawSlot("cwd"),
      risk: rawSlot("risk"),
      settledBy: rawSlot("settledBy"),
      decision: rawSlot("decision"),
      shadow: rawSlot("shadow"),
    })
    // A re-run attempt passes the same call again: it is one request.
    .onConflictDoNothing({ target: [gatePasses.responseId, gatePasses.callId] }),
);

/** Records the calls the gate settled without a person (docs/analytics.md). */
export async function insertGatePasses(tx: Db, rows: readonly TGatePass[]): Promise<void> {
  for (const row of rows) await inserting(tx, { ...row, arguments: JSON.stringify(row.arguments ?? null), cwd: row.cwd ?? null, shadow: row.shadow ?? null });
}
