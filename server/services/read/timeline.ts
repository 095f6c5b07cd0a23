import { peopleByIds } from "../../../db/repositories/display-names";
import { trajectoryHead } from "../../../db/repositories/events";
import type { TReadScope } from "../../core/read-scope";
import type { TDeps } from "../../host/deps";
import { dataForDisplay } from "./trajectory";
import { readResponse } from "./responses";
import { buildTimeline } from "./timeline-tree";

/**
 * The most events the timeline groups. A run longer than this shows its first part as a tree
 * and says so; the audit list below it pages through every event.
 */
export const TIMELINE_EVENTS = 5000;

/** `audit.timeline`: one response as turns, tool calls and waits for people, with durations and tokens. */
export async function responseTimeline(deps: TDeps, scope: TReadScope, responseId: string) {
  const row = await readResponse(deps, scope, responseId);
  const head = await trajectoryHead(deps.db, responseId, TIMELINE_EVENTS);
  const actorIds = [...new Set(head.events.flatMap((e) => (e.actorUserId ? [e.actorUserId] : [])))];
  const people = new Map((await peopleByIds(deps.db, actorIds)).map((u) => [u.id, u]));
  const events = head.events.map((e) => ({ seq: e.seq, type: e.type, data: dataForDisplay(e.data), actorUserId: e.actorUserId, transport: e.transport, createdAt: e.createdAt.toISOString() }));
  const tree = buildTimeline(events, (id) => people.get(id) ?? null);
  const first = events[0]?.createdAt ?? row.createdAt.toISOString();
  const last = events[events.length - 1]?.createdAt ?? first;
  return {
    ...tree,
    startedAt: first,
    endedAt: last,
    durationMs: Date.parse(last) - Date.parse(first),
    /** The response's own totals (input tokens are known per response, not per turn). */
    usage: row.usage,
    /** Per-token prices are not part of an agent's configuration, so the timeline shows tokens, never a cost. */
    truncated: head.more,
    limit: TIMELINE_EVENTS,
  };
}
