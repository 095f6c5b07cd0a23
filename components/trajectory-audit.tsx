"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useVirtualizer } from "@tanstack/react-virtual";
import { createTranslator, useLocale, useTranslations } from "next-intl";
import { useEffect, useMemo, useRef, useState } from "react";
import en from "../messages/en.json";
import type { TAuditEvent } from "./api-types";
import { SelectFilter, TextFilter, ToggleGroup, useDebounced } from "./filters";
import { toPrettyJson } from "./json-view";
import { useServerText } from "./list-kit/labels";
import { useFormatTimestamp } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { useUserNames } from "./use-user-names";
import { personLabel } from "./person";

const CATEGORIES = ["model", "tool", "approval", "review", "question", "steering", "usage", "lifecycle"] as const;
type TCategory = (typeof CATEGORIES)[number];

/** The translator of the `event` messages (the page's language); English when none is given. */
export type TEventTranslator = ReturnType<typeof useTranslations<"event">>;

const ENGLISH: TEventTranslator = createTranslator({ locale: "en", messages: en, namespace: "event" });

const PAGE = 500;
/** Keep loading filtered pages until this many rows are shown (a sparse search may return empty windows). */
const MIN_ROWS = 60;

type TScope = { responseId: string } | { sessionId: string };

const str = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));
const clip = (text: string, max = 220): string => (text.length > max ? `${text.slice(0, max)}…` : text);

/** What describing an event needs (the audit list's rows and the timeline's both have it). */
export type TDescribable = Pick<TAuditEvent, "type" | "data" | "actorUserId" | "transport">;

/** The colour of an event's dot: ok, warn, bad, info or muted. */
export function tone(e: TDescribable): "ok" | "warn" | "bad" | "info" | "muted" {
  const d = e.data as Record<string, unknown>;
  if (e.type === "response.completed") return d.status === "completed" ? "ok" : d.status === "requires_action" ? "warn" : "bad";
  if (e.type === "approval.resolved") return d.decision === "approve" ? "ok" : "bad";
  if (e.type === "review.verdict") return d.decision === "allow-once" ? "ok" : d.decision === "deny" ? "bad" : "warn";
  if (e.type.startsWith("approval") || e.type.startsWith("client_tool") || e.type.startsWith("question")) return "warn";
  if (e.type === "error" || e.type.includes("fail") || e.type.includes("refused") || e.type === "steer.rejected") return "bad";
  if (e.type.includes("tool")) return "info";
  return "muted";
}

/** Each tone's class on an event's row, spelled out whole (scripts/css-selectors.test.ts finds each class in the source). */
export const TONE_CLASS: Record<ReturnType<typeof tone>, string> = { ok: "tl-ok", warn: "tl-warn", bad: "tl-bad", info: "tl-info", muted: "tl-muted" };

/** A sentence for one event: what happened, in the words an auditor would use. */
/** `summary`: an approval's one-line summary in the page's language (`useServerText().summary`). */
export function describeEvent(
  e: TDescribable,
  nameOf: (id: string | null | undefined) => string,
  t: TEventTranslator = ENGLISH,
  summary: (a: { action: string; arguments?: unknown; message: string }) => string = (a) => a.message,
): string {
  const d = e.data as Record<string, unknown>;
  const by = e.actorUserId ? t("by", { name: nameOf(e.actorUserId) }) : "";
  switch (e.type) {
    case "response.created":
      return t("runStarted", { by });
    case "response.text.delta":
      return clip(str(d.delta));
    case "response.thinking.delta":
      return t("thinking", { text: clip(str(d.delta)) });
    case "model.turn": {
      const calls = Array.isArray(d.toolCalls) && d.toolCalls.length > 0 ? t("calls", { calls: (d.toolCalls as unknown[]).join(", ") }) : "";
      return t("modelTurn", { turn: str(d.turn), model: str(d.model), chars: str(d.textChars), calls, tokens: str(d.outputTokens) });
    }
    case "response.tool_call":
      return `${str(d.name)} ${clip(str(d.arguments), 200)}`;
    case "response.tool_result": {
      const out = d.output as Record<string, unknown> | undefined;
      if (out && typeof out === "object" && "exitCode" in out) return t("exit", { name: str(d.name), code: str(out.exitCode), text: clip(str(out.stdout) || str(out.stderr), 160) });
      return t("result", { name: str(d.name), text: clip(str(d.output), 200) });
    }
    case "approval.requested": {
      const a = (d.approval ?? {}) as Record<string, unknown>;
      return t("approvalRequested", { action: str(a.action), risk: str(a.risk), message: clip(summary({ action: str(a.action), arguments: a.arguments, message: str(a.message) }), 160) });
    }
    case "approval.resolved":
      return t("approvalResolved", { decision: d.decision === "approve" ? "approve" : "deny", by, via: e.transport ? t("via", { transport: e.transport }) : "" });
    case "approval.expired":
      return t("approvalExpired");
    case "review.verdict":
      return t("reviewVerdict", { reviewer: str(d.reviewer), decision: str(d.decision), risk: d.risk ? t("reviewRisk", { risk: str(d.risk) }) : "", rationale: clip(str(d.rationale), 200) });
    case "question.requested": {
      const q = (d.question ?? {}) as { questions?: Array<{ question?: string }> };
      return t("questionAsked", { text: clip((q.questions ?? []).map((x) => x.question).join(" · "), 200) });
    }
    case "question.resolved": {
      const q = (d.question ?? {}) as { status?: string; answers?: Record<string, string[]> | null; answeredBy?: { name?: string | null; email?: string | null } | null };
      const answers = q.answers ? Object.entries(q.answers).map(([k, v]) => `${k}: ${v.join(", ")}`).join("; ") : "";
      // The answerer as named now (with the email), else as the event recorded them.
      const known = e.actorUserId && nameOf(e.actorUserId) !== e.actorUserId;
      const answeredBy = !known && q.answeredBy?.name ? t("by", { name: personLabel({ name: q.answeredBy.name, email: q.answeredBy.email }) }) : by;
      return t("questionResolved", { status: q.status ?? "settled", by: answeredBy, answers: answers ? ` — ${clip(answers, 200)}` : "" });
    }
    case "question.expired":
      return t("questionExpired");
    case "client_tool.requested":
      return t("clientToolRequested", { name: str((d.clientTool as Record<string, unknown> | undefined)?.name ?? d.name) });
    case "client_tool.submitted":
      return t("clientToolSubmitted", { by });
    case "steer.queued":
      return t("steerQueued", { by, chars: str(d.chars) });
    case "steer.committed":
      return t("steerCommitted");
    case "steer.rejected":
      return t("steerRejected", { reason: str(d.reason) });
    case "steer.cancelled":
      return t("steerCancelled");
    case "response.usage":
      return t("usage", { tokens: str(d.outputTokens), total: str(d.totalOutputTokens) });
    case "harness.attempt.phase":
      return t("lifecycle", { from: d.previousPhase ? `${str(d.previousPhase)} → ` : "", phase: str(d.phase) });
    case "response.completed":
      return t("boundary", { status: str(d.status).replace("_", " ") });
    case "response.cancelled":
      return t("cancelled", { by, reason: str(d.reason) });
    default:
      return clip(str(d), 200);
  }
}

/** Export URL of the current view (the server streams it as JSONL; the browser downloads it). */
function exportHref(scope: TScope, filters: { categories: TCategory[]; actor: string; q: string }): string {
  const params = new URLSearchParams("responseId" in scope ? { responseId: scope.responseId } : { sessionId: scope.sessionId });
  if (filters.categories.length > 0) params.set("categories", filters.categories.join(","));
  if (filters.actor) params.set("actor", filters.actor);
  if (filters.q) params.set("q", filters.q);
  return `/api/export/trajectory?${params}`;
}

/**
 * The trajectory audit view of a response or a session: a virtualized timeline (smooth at 100k
 * events; pages of 500 load as you scroll), filtered by category and actor and searched on the
 * server, exported as JSONL with the same filters. `liveKey` changes when new events may exist.
 */
export function TrajectoryAudit({ scope, liveKey = "", showResponse = false }: { scope: TScope; liveKey?: string; showResponse?: boolean }) {
  const trpc = useTRPC();
  const t = useTranslations("trajectory");
  const tEvent = useTranslations("event");
  const serverText = useServerText();
  const common = useTranslations("common");
  const locale = useLocale();
  const formatTimestamp = useFormatTimestamp();
  const [categories, setCategories] = useState<TCategory[]>([]);
  const [actor, setActor] = useState("");
  const [q, setQ] = useState("");
  const query = useDebounced(q.trim(), 300);
  const filtered = categories.length > 0 || actor !== "" || query !== "";
  const input = { ...scope, limit: PAGE, ...(categories.length > 0 ? { categories } : {}), ...(actor ? { actor } : {}), ...(query ? { q: query } : {}) };
  const events = useInfiniteQuery(
    trpc.audit.trajectory.infiniteQueryOptions(input, {
      initialCursor: null,
      // At the end (`nextAfter` null) the next fetch still continues after the last event: live runs append.
      getNextPageParam: (last, all) => last.nextAfter ?? lastKey(all) ?? -1,
      placeholderData: (prev) => prev,
      staleTime: Number.POSITIVE_INFINITY,
    }),
  );
  const actors = useQuery(trpc.audit.actors.queryOptions(scope, { staleTime: 30_000 }));
  const pages = events.data?.pages ?? [];
  const rows = useMemo(() => pages.flatMap((p) => p.events), [pages]);
  const lastPage = pages[pages.length - 1];
  const more = lastPage ? lastPage.nextAfter !== null : false;
  const nameOf = useUserNames(rows.map((e) => e.actorUserId));

  const parent = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => parent.current,
    estimateSize: () => 46,
    overscan: 30,
    getItemKey: (i) => `${rows[i]?.responseId}:${rows[i]?.seq}`,
  });
  const items = virtualizer.getVirtualItems();
  const lastVisible = items[items.length - 1]?.index ?? 0;

  // Load on: near the end of what is shown, or a sparse filtered result that has not filled the view yet.
  useEffect(() => {
    if (!more || events.isFetching) return;
    if (lastVisible >= rows.length - 40 || rows.length < MIN_ROWS) void events.fetchNextPage();
  }, [more, events.isFetching, lastVisible, rows.length, events.fetchNextPage]);

  // Live: when `liveKey` changes, new events are appended after the last one shown (once
  // everything before is loaded); a change seen while a page is loading is handled right after it.
  const stale = useRef(false);
  const firstKey = useRef(liveKey);
  useEffect(() => {
    if (liveKey !== firstKey.current) stale.current = true;
  }, [liveKey]);
  useEffect(() => {
    if (!stale.current || more || events.isFetching) return;
    stale.current = false;
    void events.fetchNextPage();
  });

  const [open, setOpen] = useState<Set<string>>(new Set());
  const toggle = (key: string) =>
    setOpen((prev) => {
      const next = new Set(prev);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });

  const actorOptions = [{ value: "system", label: t("system") }, ...(actors.data ?? []).map((a) => ({ value: a.id, label: personLabel(a) }))];
  const searchedTo = lastPage && filtered && more ? lastPage.nextAfter : null;

  return (
    <div className="audit" data-testid="trajectory-audit">
      <div className="filter-bar">
        <TextFilter label={t("search")} value={q} onChange={setQ} placeholder={t("searchPlaceholder")} testId="trajectory-search" />
        <SelectFilter label={t("actor")} value={actor} onChange={setActor} options={actorOptions} anyLabel={t("everyone")} testId="trajectory-actor" />
        <a className="btn btn-quiet export-link" href={exportHref(scope, { categories, actor, q: query })} download data-testid="export-jsonl">
          {t("export")}
        </a>
      </div>
      <ToggleGroup label={t("eventTypes")} values={CATEGORIES} selected={categories} onChange={setCategories} labelOf={(c) => t(`category.${c}`)} testId="trajectory-categories" />
      <p className="muted small audit-status" aria-live="polite" data-testid="trajectory-status">
        {events.isPending
          ? common("loading")
          : events.isPlaceholderData
            ? t("searching")
            : t("count", { n: rows.length, filtered: filtered ? "yes" : "no", more: more ? "yes" : "no" })}
        {searchedTo !== null ? t("searchedTo", { n: searchedTo }) : ""}
        {events.isFetching && !events.isPending && !events.isPlaceholderData ? t("fetching") : ""}
      </p>
      {events.error ? (
        <p role="alert" className="error-box">
          {t("loadFailed", { message: events.error.message })}
        </p>
      ) : null}
      {!events.isPending && rows.length === 0 && !more ? (
        <p className="empty">{filtered ? t("noMatch") : t("none")}</p>
      ) : (
        <div ref={parent} className={`audit-scroll${events.isPlaceholderData ? " stale" : ""}`} data-testid="trajectory" aria-busy={events.isPlaceholderData} style={{ height: Math.min(Math.max(virtualizer.getTotalSize(), 46) + 2, 640) }}>
          <ul className="audit-list" aria-label={t("listLabel")} style={{ height: virtualizer.getTotalSize() }}>
            {items.map((item) => {
              const e = rows[item.index];
              if (!e) return null;
              const key = `${e.responseId}:${e.seq}`;
              const expanded = open.has(key);
              return (
                <li
                  key={item.key}
                  data-index={item.index}
                  ref={virtualizer.measureElement}
                  className={`audit-row ${TONE_CLASS[tone(e)]}`}
                  style={{ position: "absolute", top: 0, left: 0, width: "100%", transform: `translateY(${item.start}px)` }}
                  data-testid="trajectory-event"
                  data-type={e.type}
                  data-seq={e.seq}
                >
                  <button type="button" className="audit-line" aria-expanded={expanded} onClick={() => toggle(key)}>
                    <span className="tl-dot" aria-hidden="true" />
                    <time dateTime={e.createdAt} title={formatTimestamp(e.createdAt)} className="audit-time">
                      {new Date(e.createdAt).toLocaleTimeString(locale, { hour: "2-digit", minute: "2-digit", second: "2-digit", fractionalSecondDigits: 3 })}
                    </time>
                    <code className="tl-type">{e.type}</code>
                    <span className="audit-summary">{describeEvent(e, nameOf, tEvent, serverText.summary)}</span>
                    <span className="tl-meta">
                      {showResponse ? <span title={t("response")}>{e.responseId.slice(0, 13)}…</span> : null}
                      <span title={t("seq")}>#{e.seq}</span>
                      {e.frameSeq !== null ? <span title={t("frameSeq")}>{t("frame", { n: e.frameSeq })}</span> : null}
                      {e.actorUserId ? <span>{t("by", { name: nameOf(e.actorUserId) })}</span> : null}
                      {e.transport ? <span className="chip">{e.transport}</span> : null}
                    </span>
                  </button>
                  {expanded ? <pre className="code audit-data">{toPrettyJson(e.data)}</pre> : null}
                </li>
              );
            })}
          </ul>
        </div>
      )}
    </div>
  );
}

function lastKey(pages: ReadonlyArray<{ events: ReadonlyArray<{ key: number }> }>): number | null {
  for (let i = pages.length - 1; i >= 0; i--) {
    const events = pages[i]?.events ?? [];
    const last = events[events.length - 1];
    if (last) return last.key;
  }
  return null;
}
