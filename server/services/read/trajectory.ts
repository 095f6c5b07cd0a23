/** Who may read a trajectory, and how its events show in the console: read helpers the console and the export share. */
import { getSession } from "../../../db/repositories/console-lists";
import { notFound, refused } from "../../core/errors";
import type { TReadScope } from "../../core/read-scope";
import type { TDeps } from "../../host/deps";
import { viewResponse } from "./responses";

export type TTrajectoryScope = { responseId: string } | { sessionId: string };
/** Every event of a time range [from, to), across sessions: only for scopes that read everything. */
export type TTrajectoryRange = { range: { from: Date; to: Date } };

/** Refuses (404, as if missing) a trajectory the actor may not read; members read only their own. */
export async function assertTrajectoryReadable(deps: Pick<TDeps, "db">, scope: TReadScope, of: TTrajectoryScope | TTrajectoryRange): Promise<void> {
  if ("range" in of) {
    if (scope.userId !== null) throw refused("forbidden", { code: "rolesOnly", params: { act: "exportRange" } });
    return;
  }
  if ("responseId" in of) {
    await viewResponse(deps, scope, of.responseId);
    return;
  }
  const session = await getSession(deps.db, of.sessionId);
  if (!session || !scope.canRead(session.session.userId)) throw notFound("session", of.sessionId);
}

const DISPLAY_LIMIT = 16_384;

/**
 * An event's data for the console list: whole when small; else its short top-level fields (status,
 * ids, counts) and a marked preview — the export always has it whole.
 */
export function dataForDisplay(data: Record<string, unknown>): Record<string, unknown> {
  const text = JSON.stringify(data);
  if (text.length <= DISPLAY_LIMIT) return data;
  const scalars = Object.fromEntries(
    Object.entries(data).filter(([, v]) => typeof v === "number" || typeof v === "boolean" || v === null || (typeof v === "string" && v.length <= 200)),
  );
  return { ...scalars, truncated: true, bytes: text.length, preview: `${text.slice(0, DISPLAY_LIMIT)}…` };
}
