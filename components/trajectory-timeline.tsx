"use client";

import type { TTrajectoryEvent as TEvent } from "./api-types";
import { JsonView } from "./json-view";
import { formatTimestamp } from "./time-labels";
import { useUserNames } from "./use-user-names";

function tone(e: TEvent): string {
  if (e.type.startsWith("approval") || e.type.startsWith("client_tool") || e.type.startsWith("question")) return "warn";
  if (e.type === "response.completed") {
    const status = (e.data as { status?: string }).status;
    return status === "completed" ? "ok" : status === "requires_action" ? "warn" : "bad";
  }
  if (e.type === "error" || e.type.includes("fail")) return "bad";
  if (e.type.includes("tool")) return "info";
  return "muted";
}

const timeOf = (iso: string): string =>
  new Date(iso).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit", fractionalSecondDigits: 3 });

/** Every stored event of a response, in order: what happened, who did it, over which transport. */
export function TrajectoryTimeline({ events }: { events: TEvent[] }) {
  const nameOf = useUserNames(events.map((e) => e.actorUserId));
  if (events.length === 0) return <p className="empty">No events recorded yet.</p>;
  return (
    <ol className="timeline" data-testid="trajectory">
      {events.map((e) => (
        <li key={e.seq} className={`tl-item tl-${tone(e)}`} data-testid="trajectory-event" data-type={e.type}>
          <span className="tl-dot" aria-hidden="true" />
          <div className="tl-body">
            <div className="tl-head">
              <code className="tl-type">{e.type}</code>
              {e.type === "response.completed" && typeof (e.data as { status?: unknown }).status === "string" ? (
                <span className="muted">→ {String((e.data as { status: string }).status)}</span>
              ) : null}
              <span className="tl-meta">
                <span title="Event sequence">#{e.seq}</span>
                {e.frameSeq !== null ? <span title="Wire frame sequence">frame {e.frameSeq}</span> : null}
                {e.actorUserId ? <span>by {nameOf(e.actorUserId)}</span> : null}
                {e.transport ? <span className="chip">{e.transport}</span> : null}
                <time dateTime={e.createdAt} title={formatTimestamp(e.createdAt)}>
                  {timeOf(e.createdAt)}
                </time>
              </span>
            </div>
            <JsonView value={e.data} label="data" collapsed />
          </div>
        </li>
      ))}
    </ol>
  );
}
