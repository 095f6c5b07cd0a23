"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { StatusBadge } from "./badges";
import { CancelButton } from "./cancel-button";
import { JsonView } from "./json-view";
import { OutputItems } from "./output-items";
import { RequiredAction } from "./required-action";
import { TimeAgo } from "./time-labels";
import { TrajectoryTimeline } from "./trajectory-timeline";
import { trpcErrorCode, useTRPC } from "./trpc-provider";
import { LiveIndicator } from "./use-live-changes";
import { useResponseLive } from "./use-response-live";

const TERMINAL = new Set(["completed", "denied", "cancelled", "failed"]);

const ENDING: Record<string, string> = {
  denied: "A person denied the requested action. It did not run, and the response ended here.",
  cancelled: "This response was cancelled. Nothing after the cancellation ran.",
};

/** One response: status, output, usage, what it waits for, and its live trajectory. */
export function ResponseDetail({ responseId }: { responseId: string }) {
  const trpc = useTRPC();
  const query = useQuery(trpc.responses.get.queryOptions({ responseId }));
  const data = query.data;
  const terminal = data ? TERMINAL.has(data.envelope.status) : true;
  const lastFrameSeq = data ? data.trajectory.reduce<number | null>((max, e) => (e.frameSeq !== null && (max === null || e.frameSeq > max) ? e.frameSeq : max), null) : undefined;
  const { live } = useResponseLive(responseId, !!data && !terminal, lastFrameSeq);

  if (query.error) {
    const missing = trpcErrorCode(query.error) === "NOT_FOUND";
    return (
      <div className="stack">
        <p role="alert" className="error-box">
          {missing ? `There is no response ${responseId} (or it is not yours).` : `Could not load the response: ${query.error.message}`}
        </p>
        <Link href="/responses">← All responses</Link>
      </div>
    );
  }
  if (!data) return <p className="muted">Loading…</p>;
  const env = data.envelope;
  const metadata = env.metadata && Object.keys(env.metadata).length > 0 ? env.metadata : null;

  return (
    <>
      <p className="crumbs">
        <Link href="/responses">← All responses</Link>
      </p>
      <div className="page-head">
        <div>
          <h1 className="response-title">
            Response <code>{env.id}</code>
          </h1>
          <p className="muted">
            Agent <strong>{data.agent}</strong> · session <code>{env.sessionId}</code> · created <TimeAgo iso={data.createdAt} />
          </p>
        </div>
        <div className="head-side">
          <StatusBadge status={env.status} />
          {terminal ? null : <LiveIndicator live={live} />}
        </div>
      </div>

      {terminal ? null : <CancelButton responseId={env.id} />}
      {env.requiredAction ? <RequiredAction action={env.requiredAction} /> : null}
      {ENDING[env.status] ? (
        <p className={`notice notice-${env.status}`} data-testid="ending">
          {ENDING[env.status]}
        </p>
      ) : null}
      {env.error ? (
        <div className="error-box" role="alert">
          <strong>{env.error.code}</strong>: {env.error.message}
        </div>
      ) : null}

      <div className="grid-2">
        <section className="card" aria-labelledby="output-text-title">
          <h2 id="output-text-title">Output text</h2>
          {env.outputText ? <p className="prose" data-testid="output-text">{env.outputText}</p> : <p className="empty">No output text{terminal ? "" : " yet"}.</p>}
        </section>
        <section className="card" aria-labelledby="usage-title">
          <h2 id="usage-title">Usage</h2>
          <dl className="facts">
            <div>
              <dt>Input tokens</dt>
              <dd>{env.usage?.inputTokens ?? 0}</dd>
            </div>
            <div>
              <dt>Output tokens</dt>
              <dd>{env.usage?.outputTokens ?? 0}</dd>
            </div>
          </dl>
          {metadata ? <JsonView value={metadata} label="metadata" collapsed /> : null}
        </section>
      </div>

      <section className="section" aria-labelledby="items-title">
        <h2 id="items-title">Output items</h2>
        <OutputItems items={env.output} />
      </section>

      <section className="section" aria-labelledby="trajectory-title">
        <h2 id="trajectory-title">
          Trajectory <span className="count">{data.trajectory.length}</span>
        </h2>
        <TrajectoryTimeline events={data.trajectory} />
      </section>
    </>
  );
}
