"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useLocale, useTranslations } from "next-intl";
import { type ReactNode, useEffect, useRef } from "react";
import { StatusBadge } from "./badges";
import { CancelButton } from "./cancel-button";
import { JsonView } from "./json-view";
import { AttachmentList, OutputItems } from "./output-items";
import { RequiredAction } from "./required-action";
import { ResponseTimeline } from "./response-timeline";
import { SideQuestionForm } from "./side-question-form";
import { SteerForm } from "./steer-form";
import { TimeAgo, useFormatTimestamp } from "./time-labels";
import { TrajectoryAudit } from "./trajectory-audit";
import { trpcErrorCode, useTRPC } from "./trpc-provider";
import { LiveIndicator } from "./use-live-changes";
import { type TStreamEntry, useResponseStream } from "./use-response-stream";
import { DetailSkeleton } from "./detail-skeleton";
import { personLabel } from "./person";

const TERMINAL = new Set(["completed", "denied", "cancelled", "failed"]);

/** Statuses that end with a sentence saying why (keys of `response`). */
const ENDING: Record<string, "denied" | "cancelled"> = { denied: "denied", cancelled: "cancelled" };
/** The ending notice's class (spelled out whole: scripts/css-selectors.test.ts finds each class in the source). */
const ENDING_CLASS: Record<string, string> = { denied: "notice-denied", cancelled: "notice-cancelled" };

/** Each kind of streamed line's class (spelled out whole, as above). */
const STREAM_CLASS: Record<TStreamEntry["kind"], string> = {
  text: "stream-text",
  thinking: "stream-thinking",
  tool: "stream-tool",
  result: "stream-result",
  wait: "stream-wait",
  steer: "stream-steer",
  end: "stream-end",
};

/** The run's output as it streams: text, thinking, tool calls and results, waits. Follows the end. */
function LiveOutput({ entries, live }: { entries: TStreamEntry[]; live: boolean }) {
  const t = useTranslations("response");
  const box = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: scroll on every new entry
  useEffect(() => {
    const el = box.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [entries]);
  return (
    <div
      ref={box}
      className="live-output"
      data-testid="live-output"
      aria-live="polite"
      aria-busy={live}
      onScroll={(e) => {
        const el = e.currentTarget;
        pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
      }}
    >
      {entries.length === 0 ? <p className="muted small">{live ? t("waitingOutput") : t("noOutputYet")}</p> : null}
      {entries.map((e) => (
        <div key={e.key} className={`stream-line ${STREAM_CLASS[e.kind]}`} data-kind={e.kind}>
          {e.text}
        </div>
      ))}
      {live ? <span className="stream-cursor" aria-hidden="true" /> : null}
    </div>
  );
}

/** The assistant's messages, one block per turn (never run together); the joined text if there are none. */
function TurnTexts({ output, fallback }: { output: ReadonlyArray<{ type: string; content?: unknown }>; fallback: string }) {
  const texts = output.flatMap((item) =>
    item.type === "message" && Array.isArray(item.content)
      ? [(item.content as Array<{ type?: string; text?: string }>).map((c) => (c.type === "output_text" ? (c.text ?? "") : "")).join("")]
      : [],
  );
  const blocks = texts.length > 0 ? texts : [fallback];
  return (
    <div className="stack" data-testid="output-text">
      {blocks.map((text, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: messages are appended in order and never reordered
        <p key={i} className="prose message-block" data-testid="output-message">
          {text}
        </p>
      ))}
    </div>
  );
}

/** One response: status, live output, usage, what it waits for, actions (cancel, steer) and its trajectory audit. */
export function ResponseDetail({ responseId }: { responseId: string }) {
  const trpc = useTRPC();
  const t = useTranslations("response");
  const common = useTranslations("common");
  const output = useTranslations("output");
  const locale = useLocale();
  const formatTimestamp = useFormatTimestamp();
  const code = (chunks: ReactNode) => <code>{chunks}</code>;
  const strong = (chunks: ReactNode) => <strong>{chunks}</strong>;
  const query = useQuery(trpc.audit.response.queryOptions({ responseId }));
  const data = query.data;
  const terminal = data ? TERMINAL.has(data.envelope.status) : true;
  const stream = useResponseStream(responseId, !!data && !terminal);

  if (query.error) {
    const missing = trpcErrorCode(query.error) === "NOT_FOUND";
    return (
      <div className="stack">
        <p role="alert" className="error-box">
          {missing ? t("missing", { id: responseId }) : t("loadFailed", { message: query.error.message })}
        </p>
        <Link href="/responses">{t("all")}</Link>
      </div>
    );
  }
  if (!data) return <DetailSkeleton label={common("loading")} lines={6} />;
  const env = data.envelope;
  const metadata = env.metadata && Object.keys(env.metadata).length > 0 ? env.metadata : null;

  return (
    <>
      <p className="crumbs">
        <Link href="/responses">{t("all")}</Link> · <Link href={`/sessions/${env.sessionId}`}>{t("session")}</Link>
      </p>
      <div className="page-head">
        <div>
          <h1 className="response-title">{t.rich("title", { id: env.id, code })}</h1>
          <p className="muted">
            {t.rich("meta", { agent: data.agent, user: personLabel({ name: data.user, email: data.userEmail }), strong })}
            <Link href={`/sessions/${env.sessionId}`}>
              <code>{env.sessionId}</code>
            </Link>
            {t("created")}
            <TimeAgo iso={data.createdAt} />
            {data.completedAt ? t("ended", { when: formatTimestamp(data.completedAt) }) : null}
          </p>
        </div>
        <div className="head-side">
          <StatusBadge status={env.status} />
          {terminal ? null : <LiveIndicator live={stream.live} />}
        </div>
      </div>

      {terminal || !data.canAct ? null : <CancelButton responseId={env.id} />}
      {env.requiredAction ? <RequiredAction action={env.requiredAction} /> : null}
      {ENDING[env.status] ? (
        <p className={`notice ${ENDING_CLASS[env.status] ?? ""}`} data-testid="ending">
          {t(ENDING[env.status] ?? "denied")}
          {env.status === "cancelled" && data.cancelReason ? ` (${data.cancelReason})` : ""}
        </p>
      ) : null}
      {env.error ? (
        <div className="error-box" role="alert">
          <strong>{env.error.code}</strong>: {env.error.message}
        </div>
      ) : null}

      <div className="grid-2">
        <section className="card" aria-labelledby="output-text-title">
          <h2 id="output-text-title">{terminal ? t("outputText") : t("liveOutput")}</h2>
          {terminal ? (
            env.outputText ? (
              <TurnTexts output={env.output} fallback={env.outputText} />
            ) : (
              <p className="empty">{t("noOutputText")}</p>
            )
          ) : (
            <LiveOutput entries={stream.entries} live={stream.live} />
          )}
        </section>
        <section className="card" aria-labelledby="usage-title">
          <h2 id="usage-title">{t("usage")}</h2>
          <dl className="facts">
            <div>
              <dt>{t("inputTokens")}</dt>
              <dd data-testid="usage-input">{env.usage?.inputTokens ?? 0}</dd>
            </div>
            <div>
              <dt>{t("outputTokens")}</dt>
              <dd data-testid="usage-output">{env.usage?.outputTokens ?? 0}</dd>
            </div>
            <div>
              <dt>{t("events")}</dt>
              <dd>{data.eventCount.toLocaleString(locale)}</dd>
            </div>
          </dl>
          {metadata ? <JsonView value={metadata} label="metadata" collapsed /> : null}
        </section>
      </div>

      {terminal || !data.canAct ? null : <SteerForm responseId={env.id} />}
      {data.canAskSideQuestions ? <SideQuestionForm responseId={env.id} /> : null}

      {data.attachments.length > 0 ? (
        <section className="section" aria-labelledby="given-files-title" data-testid="given-files">
          <h2 id="given-files-title">{output("givenFiles")}</h2>
          <AttachmentList files={data.attachments} />
        </section>
      ) : null}

      <section className="section" aria-labelledby="items-title">
        <h2 id="items-title">{t("items")}</h2>
        <OutputItems items={env.output} />
      </section>

      <section className="section" aria-labelledby="timeline-title">
        <h2 id="timeline-title">{t("timeline")}</h2>
        <ResponseTimeline responseId={responseId} liveKey={`${stream.tick}:${data.eventCount}:${env.status}`} />
      </section>

      <section className="section" aria-labelledby="trajectory-title">
        <h2 id="trajectory-title">
          {t("trajectory")} <span className="count">{data.eventCount.toLocaleString(locale)}</span>
        </h2>
        <TrajectoryAudit scope={{ responseId }} liveKey={`${stream.tick}:${data.eventCount}:${env.status}`} />
      </section>
    </>
  );
}
