"use client";

import { useQuery } from "@tanstack/react-query";
import { useLocale, useTranslations } from "next-intl";
import { type ReactNode, useEffect, useMemo, useState } from "react";
import type { TOutputs } from "./api-types";
import { useServerText } from "./list-kit/labels";
import { humanDuration, useFormatTimestamp } from "./time-labels";
import { describeEvent, TONE_CLASS, tone } from "./trajectory-audit";
import { useTRPC } from "./trpc-provider";
import { useNow } from "./use-now";
import { useUserNames } from "./use-user-names";
import { DetailSkeleton } from "./detail-skeleton";
import { personLabel } from "./person";

type TTimeline = TOutputs["audit"]["timeline"];
type TTurn = TTimeline["turns"][number];
type TCall = TTurn["calls"][number];
type TEvent = TTurn["events"][number];
type TWait = TCall["waits"][number];

/** Lifecycle bookkeeping a reader rarely needs: shown only when asked for. */
export const isLifecycleNoise = (type: string): boolean => type.startsWith("harness.") || type === "attempt.phase" || type === "transcript.anchor";

/** The timeline's formatters in the page's language. */
function useTimelineFormat() {
  const locale = useLocale();
  const t = useTranslations("duration");
  return {
    duration: (ms: number) => humanDuration(ms, t),
    clock: (iso: string) => new Date(iso).toLocaleTimeString(locale, { hour: "2-digit", minute: "2-digit", second: "2-digit", fractionalSecondDigits: 3 }),
    fmt: (n: number) => n.toLocaleString(locale),
  };
}

const WHO = { approval: "whoApproval", question: "whoQuestion", client_tool: "whoClientTool" } as const satisfies Record<TWait["kind"], string>;

/** "waited 1 min 23 s for Ada — approved", or (ticking) how long it has been waiting so far. */
function WaitSentence({ w }: { w: TWait }) {
  const t = useTranslations("timeline");
  const { duration } = useTimelineFormat();
  if (w.waitedMs === null) return <Waiting w={w} />;
  const whom = w.byName ? personLabel({ name: w.byName, email: w.byEmail }) : w.outcome === "expired" ? t("nobodyExpired") : t(WHO[w.kind]);
  return <>{t("waited", { duration: duration(w.waitedMs), whom, outcome: t("outcome", { outcome: w.outcome }) })}</>;
}

/** Only an open wait re-renders every second (a long tree must not). */
function Waiting({ w }: { w: TWait }) {
  const t = useTranslations("timeline");
  const { duration } = useTimelineFormat();
  const now = useNow(1000);
  return <>{t("waitingSoFar", { whom: t(WHO[w.kind]), duration: duration(now - Date.parse(w.requestedAt)) })}</>;
}

/** Turns shown unfolded when a run has at most this many; a longer run opens only turns that waited for people. */
const UNFOLDED_TURNS = 12;

function EventRow({ e, nameOf }: { e: TEvent; nameOf: (id: string | null | undefined) => string }) {
  const { clock } = useTimelineFormat();
  const formatTimestamp = useFormatTimestamp();
  const tEvent = useTranslations("event");
  const serverText = useServerText();
  return (
    <li className={`tl-leaf ${TONE_CLASS[tone(e)]}`} data-testid="timeline-event" data-type={e.type}>
      <span className="tl-dot" aria-hidden="true" />
      <time dateTime={e.createdAt} title={formatTimestamp(e.createdAt)} className="audit-time">
        {clock(e.createdAt)}
      </time>
      <code className="tl-type">{e.type}</code> <span className="audit-summary">{describeEvent(e, nameOf, tEvent, serverText.summary)}</span>
    </li>
  );
}

function CallNode({ call, showNoise, nameOf }: { call: TCall; showNoise: boolean; nameOf: (id: string | null | undefined) => string }) {
  const t = useTranslations("timeline");
  const { duration } = useTimelineFormat();
  const events = call.events.filter((e) => showNoise || !isLifecycleNoise(e.type));
  return (
    <li className="tl-node tl-call" data-testid="timeline-call" data-call={call.callId}>
      <details open>
        <summary className="tl-summary">
          {t.rich("toolCall", { name: call.name, duration: call.durationMs === null ? t("running") : duration(call.durationMs), code: (chunks) => <code>{chunks}</code> })}
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
  const t = useTranslations("timeline");
  const { duration, fmt } = useTimelineFormat();
  const events = turn.events.filter((e) => showNoise || !isLifecycleNoise(e.type));
  const label = turn.turn === null ? t("turnInProgress", { n: index + 1 }) : t("turn", { n: turn.turn + 1 });
  return (
    <li className="tl-node tl-turn" data-testid="timeline-turn" data-turn={turn.turn ?? ""}>
      <details open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary className="tl-summary">
          <strong>{label}</strong> · {duration(turn.durationMs)}
          {turn.modelMs !== null ? <span className="muted">{t("model", { duration: duration(turn.modelMs) })}</span> : null} ·{" "}
          <span data-testid="turn-tokens">{t("turnTokens", { n: fmt(turn.outputTokens) })}</span>
          {turn.model ? <span className="chip">{turn.model}</span> : null}
        </summary>
        {open && turn.text ? <p className="tl-text prose">{turn.text.length > 400 ? `${turn.text.slice(0, 400)}…` : turn.text}</p> : null}
        {open && turn.thinkingChars > 0 ? <p className="muted small">{t("reasoning", { n: fmt(turn.thinkingChars) })}</p> : null}
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
  const t = useTranslations("timeline");
  const locale = useLocale();
  const { duration, fmt } = useTimelineFormat();
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
  if (query.error) return <p role="alert" className="error-box">{t("loadFailed", { message: query.error.message })}</p>;
  if (!data) return <DetailSkeleton label={t("loading")} lines={5} />;
  const noise = all.filter((e) => isLifecycleNoise(e.type)).length;
  const start = data.start.filter((e) => showNoise || !isLifecycleNoise(e.type));
  const stamp = (iso: string) =>
    new Date(iso).toLocaleString(locale, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });
  return (
    <div className="card run-timeline" data-testid="timeline">
      <p className="small" data-testid="timeline-when">
        {t.rich("when", {
          duration: duration(data.durationMs),
          start: () => <time dateTime={data.startedAt}>{stamp(data.startedAt)}</time>,
          end: () => <time dateTime={data.endedAt}>{stamp(data.endedAt)}</time>,
          strong: (chunks: ReactNode) => <strong>{chunks}</strong>,
          zone: () => <span data-testid="timeline-zone">{zone}</span>,
        })}
      </p>
      <p className="small" data-testid="timeline-totals">
        {t("totals", { n: data.turns.length, duration: duration(data.waitedMs) })}
        <span data-testid="timeline-tokens">{t("tokens", { input: fmt(data.usage.inputTokens), output: fmt(data.usage.outputTokens) })}</span>
      </p>
      <label className="check-row small tl-noise">
        <input type="checkbox" checked={showNoise} onChange={(e) => setShowNoise(e.target.checked)} data-testid="timeline-noise-toggle" />
        {t("noise", { n: fmt(noise) })}
      </label>
      {data.truncated ? <p className="notice small">{t("truncated", { n: fmt(data.limit) })}</p> : null}
      <ol className="tl-tree">
        {start.length > 0 ? (
          <li className="tl-node" data-testid="timeline-start">
            <details open>
              <summary className="tl-summary">
                <strong>{t("start")}</strong>
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
