"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useLocale, useTranslations } from "next-intl";
import { useState } from "react";
import { useActivity } from "./activity";
import type { TActivityEvent, TWaitingItem, TWaitingKind } from "./api-types";
import { RiskBadge } from "./badges";
import { ListSkeleton } from "./list-kit/list-states";
import { Countdown, TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { LiveIndicator } from "./use-live-changes";
import { Person } from "./person";
import { useUserNames } from "./use-user-names";
import { PageHead } from "./list-kit/page-head";

const KINDS: TWaitingKind[] = ["approval", "question", "client_tool", "device", "steering"];

/** Each kind's badge class, spelled out whole (scripts/css-selectors.test.ts finds each class in the source). */
const KIND_CLASS: Record<TWaitingKind, string> = {
  approval: "kind-approval",
  question: "kind-question",
  client_tool: "kind-client_tool",
  device: "kind-device",
  steering: "kind-steering",
};

/** Where a person acts on a waiting item (the label is a key of `home`). */
function actionOf(item: TWaitingItem): { href: string; label: "decide" | "answer" | "open" } | null {
  if (item.kind === "approval" || item.kind === "device") return { href: `/approvals?focus=${item.id}`, label: "decide" };
  if (item.kind === "question") return { href: `/answer/${item.id}`, label: "answer" };
  return item.responseId ? { href: `/responses/${item.responseId}`, label: "open" } : null;
}

type TSort = "expiry" | "age";

const expiryKey = (i: TWaitingItem) => (i.expiresAt ? new Date(i.expiresAt).getTime() : Number.POSITIVE_INFINITY);

/** Home: everything in the workspace waiting on a person or a client, live, with counts per kind. */
export function WaitingHome() {
  const trpc = useTRPC();
  const t = useTranslations("home");
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
      <PageHead title={t("title")} lede={t("lead")}>
        <LiveIndicator live={live} />
      </PageHead>

      <ul className="kind-cards" aria-label={t("perKind")}>
        {KINDS.map((kind) => {
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
                <span className="kind-label">{t(`kinds.${kind}`)}</span>
                <span className="kind-hint">{t(`hints.${kind}`)}</span>
              </button>
            </li>
          );
        })}
      </ul>

      <section className="section" aria-labelledby="waiting-title">
        <div className="section-head">
          <h2 id="waiting-title">
            {kinds.length === 0 ? t("everything") : kinds.map((k) => t(`kind.${k}`)).join(", ")}{" "}
            <span className="count" data-testid="waiting-count">
              {kinds.length === 0 ? total : items.length}
            </span>
          </h2>
          <fieldset className="segmented">
            <legend className="visually-hidden">{t("sort")}</legend>
            <button type="button" aria-pressed={sort === "expiry"} onClick={() => setSort("expiry")}>
              {t("expiresSoonest")}
            </button>
            <button type="button" aria-pressed={sort === "age"} onClick={() => setSort("age")}>
              {t("waitingLongest")}
            </button>
          </fieldset>
        </div>
        {waiting.error ? (
          <p role="alert" className="error-box">
            {t("loadFailed", { message: waiting.error.message })}
          </p>
        ) : waiting.isPending ? (
          <ListSkeleton rows={4} columns={5} />
        ) : items.length === 0 ? (
          <div className="empty" data-testid="nothing-waiting">
            {t.rich("nothing", { strong: (chunks) => <strong>{chunks}</strong> })}
          </div>
        ) : (
          <div className="table-wrap">
            <table className="table" data-testid="waiting-table">
              <thead>
                <tr>
                  <th scope="col">{t("waitsOn")}</th>
                  <th scope="col">{t("what")}</th>
                  <th scope="col">{t("agent")}</th>
                  <th scope="col">{t("for")}</th>
                  <th scope="col">{t("since")}</th>
                  <th scope="col">{t("expires")}</th>
                  <th scope="col" className="col-actions">
                    <span className="visually-hidden">{t("act")}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((item) => {
                  const action = actionOf(item);
                  return (
                    <tr key={`${item.kind}:${item.id}`} data-testid="waiting-item" data-kind={item.kind} data-id={item.id} data-response-id={item.responseId ?? ""}>
                      <td className="nowrap">
                        <span className={`badge ${KIND_CLASS[item.kind]}`}>{t(`kind.${item.kind}`)}</span>
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
                          <div className="small muted">{t("gatewayQuestion")}</div>
                        )}
                      </td>
                      <td>{item.agent ?? "—"}</td>
                      <td>
                        <Person name={item.userName} email={item.userEmail} />
                      </td>
                      <td className="nowrap">
                        <TimeAgo iso={item.since} />
                      </td>
                      <td className="nowrap">{item.expiresAt ? <Countdown iso={item.expiresAt} /> : <span className="muted small">{t("nextTurn")}</span>}</td>
                      <td className="nowrap col-actions">
                        {action ? (
                          <Link href={action.href} className="btn btn-primary btn-small">
                            {t(action.label)}
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


/** What happened since this console was opened (newest first), as the live feed delivers it. */
function ActivityPanel({ events, live }: { events: TActivityEvent[]; live: boolean }) {
  const t = useTranslations("home");
  const ts = useTranslations("status");
  const locale = useLocale();
  const nameOf = useUserNames(events.map((e) => e.actorUserId));
  // Event types are dotted ("approval.resolved"); message keys cannot hold dots.
  const eventText = (type: string) => {
    const key = `event.${type.replace(/\./g, "_")}` as "event.approval_resolved";
    return t.has(key) ? t(key) : type;
  };
  return (
    <section className="section" aria-labelledby="activity-title">
      <h2 id="activity-title">{t("activity")}</h2>
      {events.length === 0 ? (
        <p className="empty">{live ? t("quiet") : t("connecting")}</p>
      ) : (
        <ol className="activity" data-testid="activity" aria-live="polite">
          {events.slice(0, 15).map((e) => (
            <li key={e.id} data-testid="activity-event" data-type={e.type}>
              <time dateTime={e.createdAt} className="muted small">
                {new Date(e.createdAt).toLocaleTimeString(locale)}
              </time>
              <span>
                {eventText(e.type)}
                {e.type === "response.completed" && e.status ? <span className="muted"> ({ts.has(e.status as "pending") ? ts(e.status as "pending") : e.status.replace("_", " ")})</span> : null}
                {e.actorUserId ? <span className="muted">{t("by", { name: nameOf(e.actorUserId) })}</span> : null}
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
