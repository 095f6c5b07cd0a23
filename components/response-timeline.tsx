"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useState } from "react";
import type { TOutputs } from "./api-types";
import { formatTimestamp } from "./time-labels";
import { describeEvent, tone } from "./trajectory-audit";
import { useTRPC } from "./trpc-provider";
import { useNow } from "./use-now";
import { useUserNames } from "./use-user-names";

type TTimeline = TOutputs["audit"]["timeline"];
type TTurn = TTimeline["turns"][number];
type TCall = TTurn["calls"][number];
type TEvent = TTurn["events"][number];
type TWait = TCall["waits"][number];

/** Lifecycle bookkeeping a reader rarely needs: shown only when asked for. */
export const isLifecycleNoise = (type: string): boolean => type.startsWith("harness.") || type === "attempt.phase" || type === "transcript.anchor";

/** "850 ms", "4.2 s", "1 min 23 s", "2 h 05 min". */
export function humanDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

const clock = (iso: string) => new Date(iso).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit", fractionalSecondDigits: 3 });
const fmt = (n: number) => n.toLocaleString();
const WHO: Record<TWait["kind"], string> = { approval: "a decision", question: "an answer", client_tool: "the client" };

/** "waited 1 min 23 s for Ada — approved", or (ticking) how long it has been waiting so far. */
function WaitSentence({ w }: { w: TWait }) {
  if (w.waitedMs === null) return <Waiting w={w} />;
  const whom = w.byName ?? (w.outcome === "expired" ? "nobody (it expired)" : WHO[w.kind]);
  return <>{`waited ${humanDuration(w.waitedMs)} for ${whom} — ${w.outcome}`}</>;
}

/** Only an open wait re-renders every second (a long tree must not). */
function Waiting({ w }: { w: TWait }) {
  const now = useNow(1000);
  return <>{`waiting for ${WHO[w.kind]} for ${humanDuration(now - Date.parse(w.requestedAt))} so far`}</>;
}

/** Turns shown unfolded when a run has at most this many; a longer run opens only turns that waited for people. */
const UNFOLDED_TURNS = 12;

function EventRow({ e, nameOf }: { e: TEvent; nameOf: (id: string | null | undefined) => string }) {
  return (
    <li className={`tl-leaf tl-${tone(e)}`} data-testid="timeline-event" data-type={e.type}>
      <span className="tl-dot" aria-hidden="true" />
      <time dateTime={e.createdAt} title={formatTimestamp(e.createdAt)} className="audit-time">
        {clock(e.createdAt)}
      </time>
      <code className="tl-type">{e.type}</code> <span className="audit-summary">{describeEvent(e, nameOf)}</span>
    </li>
  );
}

function CallNode({ call, showNoise, nameOf }: { call: TCall; showNoise: boolean; nameOf: (id: string | null | undefined) => string }) {
  const events = call.events.filter((e) => showNoise || !isLifecycleNoise(e.type));
  return (
    <li className="tl-node tl-call" data-testid="timeline-call" data-call={call.callId}>
      <details open>
        <summary className="tl-summary">
          Tool call <code>{call.name}</code> · {call.durationMs === null ? "running" : humanDuration(call.durationMs)}
        </summary>
        {call.waits.map((w) => (
          <p key={w.id} className={`tl-wait tl-wait-${w.outcome}`} data-testid="timeline-wait" data-kind={w.kind}>
            <WaitSentence w={w} />
          </p>
        ))}
        <ol className="tl-children">
          {events.map((e) => (
            <EventRow key={e.seq} e={e} nameOf={nameOf} />
          ))}
        </ol>
      </details>
    </li>
  );
}

function TurnNode({ turn, index, unfolded, showNoise, nameOf }: { turn: TTurn; index: number; unfolded: boolean; showNoise: boolean; nameOf: (id: string | null | undefined) => string }) {
  // Children render only while open: a run of hundreds of turns stays a short DOM.
  const [open, setOpen] = useState(unfolded || turn.calls.some((c) => c.waits.length > 0));
  const events = turn.events.filter((e) => showNoise || !isLifecycleNoise(e.type));
  const label = turn.turn === null ? `Turn ${index + 1} (in progress)` : `Turn ${turn.turn + 1}`;
  return (
    <li className="tl-node tl-turn" data-testid="timeline-turn" data-turn={turn.turn ?? ""}>
      <details open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary className="tl-summary">
          <strong>{label}</strong> · {humanDuration(turn.durationMs)}
          {turn.modelMs !== null ? <span className="muted"> (model {humanDuration(turn.modelMs)})</span> : null} ·{" "}
          <span data-testid="turn-tokens">{fmt(turn.outputTokens)} output tokens</span>
          {turn.model ? <span className="chip">{turn.model}</span> : null}
        </summary>
        {open && turn.text ? <p className="tl-text prose">{turn.text.length > 400 ? `${turn.text.slice(0, 400)}…` : turn.text}</p> : null}
        {open && turn.thinkingChars > 0 ? <p className="muted small">Reasoning: {fmt(turn.thinkingChars)} characters</p> : null}
        {open ? (
          <ol className="tl-children">
            {turn.calls.map((c) => (
              <CallNode key={c.callId} call={c} showNoise={showNoise} nameOf={nameOf} />
            ))}
            {events.map((e) => (
              <EventRow key={e.seq} e={e} nameOf={nameOf} />
            ))}
          </ol>
        ) : null}
      </details>
    </li>
  );
}

/**
 * A response's run as a tree: turns, their tool calls and the waits for people, each with its
 * duration, and tokens per turn and in total. Lifecycle events are hidden until asked for.
 * `liveKey` changes when new events may exist.
 */
export function ResponseTimeline({ responseId, liveKey }: { responseId: string; liveKey: string }) {
  const trpc = useTRPC();
  const query = useQuery(trpc.audit.timeline.queryOptions({ responseId }));
  const { refetch } = query;
  // biome-ignore lint/correctness/useExhaustiveDependencies: refetch whenever the run may have moved on
  useEffect(() => {
    void refetch();
  }, [liveKey, refetch]);
  const [showNoise, setShowNoise] = useState(false);
  const data = query.data;
  const all = useMemo(() => (data ? [...data.start, ...data.turns.flatMap((t) => [...t.events, ...t.calls.flatMap((c) => c.events)])] : []), [data]);
  const nameOf = useUserNames(all.map((e) => e.actorUserId));
  const zone = useMemo(() => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC", []);
  if (query.error) return <p role="alert" className="error-box">Could not load the timeline: {query.error.message}</p>;
  if (!data) return <p className="muted">Loading the timeline…</p>;
  const noise = all.filter((e) => isLifecycleNoise(e.type)).length;
  const start = data.start.filter((e) => showNoise || !isLifecycleNoise(e.type));
  const stamp = (iso: string) =>
    new Date(iso).toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });
  return (
    <div className="card run-timeline" data-testid="timeline">
      <p className="small" data-testid="timeline-when">
        Started <time dateTime={data.startedAt}>{stamp(data.startedAt)}</time> · last event <time dateTime={data.endedAt}>{stamp(data.endedAt)}</time> ·{" "}
        <strong>{humanDuration(data.durationMs)}</strong> in all · times in <span data-testid="timeline-zone">{zone}</span>
      </p>
      <p className="small" data-testid="timeline-totals">
        {fmt(data.turns.length)} turn{data.turns.length === 1 ? "" : "s"} · waited for people {humanDuration(data.waitedMs)} ·{" "}
        <span data-testid="timeline-tokens">
          {fmt(data.usage.inputTokens)} input and {fmt(data.usage.outputTokens)} output tokens
        </span>
      </p>
      <label className="check-row small tl-noise">
        <input type="checkbox" checked={showNoise} onChange={(e) => setShowNoise(e.target.checked)} data-testid="timeline-noise-toggle" /> Show lifecycle events ({fmt(noise)})
      </label>
      {data.truncated ? <p className="notice small">This run is long: the tree shows its first {fmt(data.limit)} events; the audit list below has them all.</p> : null}
      <ol className="tl-tree">
        {start.length > 0 ? (
          <li className="tl-node" data-testid="timeline-start">
            <details open>
              <summary className="tl-summary">
                <strong>Start</strong>
              </summary>
              <ol className="tl-children">
                {start.map((e) => (
                  <EventRow key={e.seq} e={e} nameOf={nameOf} />
                ))}
              </ol>
            </details>
          </li>
        ) : null}
        {data.turns.map((t, i) => (
          <TurnNode key={t.startedAt + String(t.turn)} turn={t} index={i} unfolded={data.turns.length <= UNFOLDED_TURNS} showNoise={showNoise} nameOf={nameOf} />
        ))}
      </ol>
    </div>
  );
}
