"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useActivity } from "./activity";
import type { TActivityEvent, TWaitingItem, TWaitingKind } from "./api-types";
import { RiskBadge } from "./badges";
import { ListSkeleton } from "./list-kit/list-states";
import { Countdown, TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { LiveIndicator } from "./use-live-changes";
import { useUserNames } from "./use-user-names";

const KINDS: Array<{ kind: TWaitingKind; label: string; hint: string }> = [
  { kind: "approval", label: "Approvals", hint: "a person approves or denies an action" },
  { kind: "question", label: "Questions", hint: "a person answers" },
  { kind: "client_tool", label: "Client tools", hint: "the connected client runs a tool" },
  { kind: "device", label: "Devices", hint: "a command on a paired device needs approval" },
  { kind: "steering", label: "Steering", hint: "a message waits for the run's next turn" },
];

const KIND_LABEL: Record<TWaitingKind, string> = { approval: "Approval", question: "Question", client_tool: "Client tool", device: "Device", steering: "Steering" };

/** Where a person acts on a waiting item. */
function actionOf(item: TWaitingItem): { href: string; label: string } | null {
  if (item.kind === "approval" || item.kind === "device") return { href: `/approvals?focus=${item.id}`, label: "Decide" };
  if (item.kind === "question") return { href: `/answer/${item.id}`, label: "Answer" };
  return item.responseId ? { href: `/responses/${item.responseId}`, label: "Open" } : null;
}

type TSort = "expiry" | "age";

const expiryKey = (i: TWaitingItem) => (i.expiresAt ? new Date(i.expiresAt).getTime() : Number.POSITIVE_INFINITY);

/** Home: everything in the workspace waiting on a person or a client, live, with counts per kind. */
export function WaitingHome() {
  const trpc = useTRPC();
  const { live, events } = useActivity();
  const waiting = useQuery(trpc.console.waiting.queryOptions());
  const [kinds, setKinds] = useState<TWaitingKind[]>([]);
  const [sort, setSort] = useState<TSort>("expiry");
  const counts = waiting.data?.counts;
  const total = counts ? Object.values(counts).reduce((a, b) => a + b, 0) : 0;
  const items = (waiting.data?.items ?? [])
    .filter((i) => kinds.length === 0 || kinds.includes(i.kind))
    .sort((a, b) => (sort === "expiry" ? expiryKey(a) - expiryKey(b) : new Date(a.since).getTime() - new Date(b.since).getTime()));

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Waiting</h1>
          <p className="muted">Every run that is stopped for a person or a client right now: what it waits on, for whom, since when and until when.</p>
        </div>
        <LiveIndicator live={live} />
      </div>

      <ul className="kind-cards" aria-label="Waiting per kind">
        {KINDS.map(({ kind, label, hint }) => {
          const on = kinds.includes(kind);
          const n = counts?.[kind] ?? 0;
          return (
            <li key={kind}>
              <button
                type="button"
                className={`kind-card${on ? " on" : ""}${n > 0 ? " busy" : ""}`}
                aria-pressed={on}
                onClick={() => setKinds(on ? kinds.filter((k) => k !== kind) : [...kinds, kind])}
                data-testid={`count-${kind}`}
              >
                <span className="kind-count">{counts ? n : "–"}</span>
                <span className="kind-label">{label}</span>
                <span className="kind-hint">{hint}</span>
              </button>
            </li>
          );
        })}
      </ul>

      <section className="section" aria-labelledby="waiting-title">
        <div className="section-head">
          <h2 id="waiting-title">
            {kinds.length === 0 ? "Everything waiting" : kinds.map((k) => KIND_LABEL[k]).join(", ")}{" "}
            <span className="count" data-testid="waiting-count">
              {kinds.length === 0 ? total : items.length}
            </span>
          </h2>
          <fieldset className="segmented">
            <legend className="visually-hidden">Sort</legend>
            <button type="button" aria-pressed={sort === "expiry"} onClick={() => setSort("expiry")}>
              Expires soonest
            </button>
            <button type="button" aria-pressed={sort === "age"} onClick={() => setSort("age")}>
              Waiting longest
            </button>
          </fieldset>
        </div>
        {waiting.error ? (
          <p role="alert" className="error-box">
            Could not load what is waiting: {waiting.error.message}
          </p>
        ) : waiting.isPending ? (
          <ListSkeleton rows={4} columns={5} />
        ) : items.length === 0 ? (
          <div className="empty" data-testid="nothing-waiting">
            <strong>Nothing is waiting.</strong> New approvals, questions and client tools appear here as soon as a run stops for them.
          </div>
        ) : (
          <div className="table-wrap">
            <table className="table" data-testid="waiting-table">
              <thead>
                <tr>
                  <th scope="col">Waits on</th>
                  <th scope="col">What</th>
                  <th scope="col">Agent</th>
                  <th scope="col">For</th>
                  <th scope="col">Since</th>
                  <th scope="col">Expires</th>
                  <th scope="col" className="col-actions">
                    <span className="visually-hidden">Act</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((item) => {
                  const action = actionOf(item);
                  return (
                    <tr key={`${item.kind}:${item.id}`} data-testid="waiting-item" data-kind={item.kind} data-id={item.id} data-response-id={item.responseId ?? ""}>
                      <td className="nowrap">
                        <span className={`badge kind-${item.kind}`}>{KIND_LABEL[item.kind]}</span>
                      </td>
                      <td className="request-cell">
                        {item.kind === "approval" || item.kind === "device" || item.kind === "client_tool" ? <code>{item.title}</code> : <span className="clamp">{item.title}</span>}{" "}
                        {item.risk ? <RiskBadge risk={item.risk} /> : null}
                        {item.responseId ? (
                          <div className="small">
                            <Link href={`/responses/${item.responseId}`} className="muted">
                              {item.responseId}
                            </Link>
                          </div>
                        ) : (
                          <div className="small muted">Gateway question</div>
                        )}
                      </td>
                      <td>{item.agent ?? "—"}</td>
                      <td className="nowrap">{item.userName}</td>
                      <td className="nowrap">
                        <TimeAgo iso={item.since} />
                      </td>
                      <td className="nowrap">{item.expiresAt ? <Countdown iso={item.expiresAt} /> : <span className="muted small">next turn</span>}</td>
                      <td className="nowrap col-actions">
                        {action ? (
                          <Link href={action.href} className="btn btn-primary btn-small">
                            {action.label}
                          </Link>
                        ) : null}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <ActivityPanel events={events} live={live} />
    </>
  );
}

const EVENT_TEXT: Record<string, string> = {
  "response.created": "Run started",
  "response.completed": "Run reached a boundary",
  "response.cancelled": "Run cancelled",
  "approval.requested": "Approval requested",
  "approval.resolved": "Approval decided",
  "approval.expired": "Approval expired",
  "question.requested": "Question asked",
  "question.resolved": "Question settled",
  "question.expired": "Question expired",
  "client_tool.requested": "Client tool requested",
  "client_tool.submitted": "Client tool result submitted",
  "client_tool.expired": "Client tool expired",
  "review.verdict": "Exec reviewer verdict",
  "steer.queued": "Steering message queued",
  "steer.committed": "Steering message delivered",
  "steer.rejected": "Steering message rejected",
  "steer.cancelled": "Steering message cancelled",
  "device.invoked": "Device command ran",
  "device.refused": "Device command refused",
};

/** What happened since this console was opened (newest first), as the live feed delivers it. */
function ActivityPanel({ events, live }: { events: TActivityEvent[]; live: boolean }) {
  const nameOf = useUserNames(events.map((e) => e.actorUserId));
  return (
    <section className="section" aria-labelledby="activity-title">
      <h2 id="activity-title">Activity</h2>
      {events.length === 0 ? (
        <p className="empty">{live ? "Nothing has happened since you opened the console. Events appear here as they happen." : "Connecting to the live feed…"}</p>
      ) : (
        <ol className="activity" data-testid="activity" aria-live="polite">
          {events.slice(0, 15).map((e) => (
            <li key={e.id} data-testid="activity-event" data-type={e.type}>
              <time dateTime={e.createdAt} className="muted small">
                {new Date(e.createdAt).toLocaleTimeString()}
              </time>
              <span>
                {EVENT_TEXT[e.type] ?? e.type}
                {e.type === "response.completed" && e.status ? <span className="muted"> ({e.status.replace("_", " ")})</span> : null}
                {e.actorUserId ? <span className="muted"> by {nameOf(e.actorUserId)}</span> : null}
                {e.transport ? <span className="chip">{e.transport}</span> : null}
              </span>
              <Link href={`/responses/${e.responseId}`} className="small">
                {e.agent} · {e.responseId.slice(0, 14)}…
              </Link>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
