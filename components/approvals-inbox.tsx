"use client";

import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useActivity } from "./activity";
import type { TInboxFilter, TInboxRow } from "./api-types";
import { ApprovalCard, type TDecision, type TDecisionExtra } from "./approval-card";
import { useMe } from "./app-shell";
import { DecidedList } from "./decided-list";
import { DecisionConfirm, type TConfirming } from "./decision-confirm";
import { DecisionNote, ownOutcome, SettledCard } from "./decision-outcome";
import { errorSentence } from "./error-sentence";
import { Kbd, SelectFilter, ToggleGroup } from "./filters";
import { ShortcutsHelp } from "./shortcuts-help";
import { useTRPC } from "./trpc-provider";
import { useKeptDecisions } from "./use-kept-decisions";
import { LiveIndicator } from "./use-live-changes";

const RISKS = ["low", "medium", "high"] as const;
const AGES = [
  { value: "60000", label: "Older than 1 min" },
  { value: "600000", label: "Older than 10 min" },
  { value: "3600000", label: "Older than 1 h" },
];

/** Keys typed into a form control are text, not shortcuts. */
const isTyping = (target: EventTarget | null): boolean => {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
};

/** 409s that mean the approval was settled by someone else (not a changed request, which stays pending). */
const SETTLED_ELSEWHERE = new Set(["already_decided", "expired", "conflict"]);
const domainCodeOf = (error: unknown): string | null => ((error as { data?: { domainCode?: string | null } } | null)?.data?.domainCode ?? null);

/** Whether the caller may put a row in a bulk decision: never high risk, never one the server would refuse. */
const bulkable = (r: TInboxRow): boolean => r.risk !== "high" && r.refusal === null;

/** The approvals inbox: filters, keyboard triage (j/k, a, d, x), bulk decisions for low/medium risk, and the decided history. */
export function ApprovalsInbox() {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const me = useMe();
  const { live } = useActivity();
  const canDecide = me?.role !== "auditor";
  const seesEveryone = me?.role !== "member";

  const [agent, setAgent] = useState("");
  const [userId, setUserId] = useState("");
  const [risks, setRisks] = useState<Array<(typeof RISKS)[number]>>([]);
  const [reviewer, setReviewer] = useState("");
  const [age, setAge] = useState("");
  const filter: Omit<TInboxFilter, "status"> = {
    ...(agent ? { agent } : {}),
    ...(userId ? { userId } : {}),
    ...(risks.length > 0 ? { risks } : {}),
    ...(reviewer ? { reviewer: reviewer as "ask" | "none" } : {}),
    ...(age ? { olderThanMs: Number(age) } : {}),
  };
  const filtered = Object.keys(filter).length > 0;

  const agents = useQuery(trpc.console.agents.queryOptions(undefined, { staleTime: 300_000 }));
  const people = useQuery(trpc.console.people.queryOptions(undefined, { enabled: seesEveryone, staleTime: 60_000 }));
  const pending = useQuery(trpc.inbox.list.queryOptions({ status: "pending", limit: 200, ...filter }));
  const decided = useInfiniteQuery(
    trpc.inbox.list.infiniteQueryOptions({ status: "decided", limit: 50, ...filter }, { getNextPageParam: (last) => last.nextCursor ?? undefined }),
  );
  const rows = useMemo(() => pending.data?.rows ?? [], [pending.data]);
  const kept = useKeptDecisions(pending.data?.rows, JSON.stringify(filter));
  const questions = useQuery(trpc.console.waiting.queryOptions());
  const questionCount = questions.data?.counts.question ?? 0;

  // ── selection (j/k), bulk selection (x) ──────────────────────────────────────
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const lastIndex = useRef(0);
  const cards = useRef(new Map<string, HTMLElement>());
  const [bulk, setBulk] = useState<Set<string>>(new Set());
  const [help, setHelp] = useState(false);
  const [announcement, setAnnouncement] = useState("");
  const [confirming, setConfirming] = useState<TConfirming | null>(null);
  const [bulkNote, setBulkNote] = useState<string | null>(null);
  const [busy, setBusy] = useState<Set<string>>(new Set());
  const [errors, setErrors] = useState<Record<string, string>>({});
  const pendingHeading = useRef<HTMLHeadingElement>(null);

  // A link from Home (`?focus=<approvalId>`) selects that request.
  const focusFromLink = useRef<string | null>(null);
  useEffect(() => {
    const focus = new URLSearchParams(window.location.search).get("focus");
    if (focus) {
      focusFromLink.current = focus;
      setSelectedId(focus);
    }
  }, []);

  // Keep a valid selection as items come and go: the same item, else the one now at its place.
  useEffect(() => {
    if (rows.length === 0) return;
    const index = selectedId ? rows.findIndex((r) => r.id === selectedId) : -1;
    if (index >= 0) {
      lastIndex.current = index;
      if (selectedId && focusFromLink.current === selectedId) {
        focusFromLink.current = null;
        const el = cards.current.get(selectedId);
        el?.focus({ preventScroll: true });
        el?.scrollIntoView({ block: "start" });
      }
    }
    else setSelectedId(rows[Math.min(lastIndex.current, rows.length - 1)]?.id ?? null);
    setBulk((prev) => {
      const next = new Set([...prev].filter((id) => rows.some((r) => r.id === id && bulkable(r))));
      return next.size === prev.size ? prev : next;
    });
  }, [rows, selectedId]);

  const select = useCallback((id: string | null, focus = true) => {
    setSelectedId(id);
    if (id && focus) {
      const el = cards.current.get(id);
      el?.focus({ preventScroll: true });
      el?.scrollIntoView({ block: "nearest", behavior: "smooth" });
    }
  }, []);

  const refresh = () => {
    void queryClient.invalidateQueries(trpc.inbox.list.pathFilter());
    void queryClient.invalidateQueries(trpc.approvals.pathFilter());
    void queryClient.invalidateQueries(trpc.console.waiting.pathFilter());
  };

  const decideOne = useMutation(trpc.approvals.decide.mutationOptions());
  const decideMany = useMutation(trpc.inbox.decideMany.mutationOptions());

  const send = async (a: TInboxRow, decision: TDecision, extra: TDecisionExtra = {}) => {
    setBusy((b) => new Set(b).add(a.id));
    setErrors(({ [a.id]: _, ...rest }) => rest);
    kept.claim(a.id);
    try {
      const decided = await decideOne.mutateAsync({ approvalId: a.id, decision, bindingHash: a.bindingHash, ...extra });
      if (!decided.settled) {
        kept.release(a.id);
        setAnnouncement(`Your approval was recorded (${decided.approvals} of ${decided.requiredApprovals}); it runs once enough other people approve: ${a.message}`);
      } else {
        const outcome = ownOutcome(a, decision, extra);
        kept.keepMine(a, outcome);
        setAnnouncement(outcome);
      }
      // The decided card leaves the list; keep keyboard focus in a safe place (never on the next Approve).
      if (document.activeElement && cards.current.get(a.id)?.contains(document.activeElement)) pendingHeading.current?.focus();
    } catch (error) {
      // Someone else settled it first: the card stays and says who, how and when.
      if (SETTLED_ELSEWHERE.has(domainCodeOf(error) ?? "")) kept.keepLost(a, decision);
      else kept.release(a.id);
      const sentence = errorSentence(error, "decide");
      setErrors((e) => ({ ...e, [a.id]: sentence }));
      setAnnouncement(sentence);
    } finally {
      setBusy((b) => {
        const next = new Set(b);
        next.delete(a.id);
        return next;
      });
      refresh();
    }
  };

  const decide = (a: TInboxRow, decision: TDecision, extra: TDecisionExtra = {}) => {
    if (!canDecide || busy.has(a.id)) return;
    // The card shows why instead of the buttons; a shortcut must not send what the server refuses.
    if (a.refusal !== null) {
      setAnnouncement(a.refusal);
      return;
    }
    // A standing grant is always confirmed with its scope named; high risk always asks too.
    if (decision === "approve" && (a.risk === "high" || extra.grant)) setConfirming({ a, extra });
    else void send(a, decision, extra);
  };

  const bulkRows = rows.filter((r) => bulk.has(r.id));
  const sendBulk = async (decision: TDecision) => {
    for (const r of bulkRows) kept.claim(r.id);
    try {
      const outcomes = await decideMany.mutateAsync({ decision, items: bulkRows.map((r) => ({ approvalId: r.id, bindingHash: r.bindingHash })) });
      const failed = outcomes.filter((o) => !o.ok);
      const note = `You ${decision === "approve" ? "approved" : "denied"} ${outcomes.length - failed.length} of ${outcomes.length} selected requests.${failed.length > 0 ? ` ${failed.length} could not be decided; each says why.` : ""}`;
      setAnnouncement(note);
      setBulkNote(note);
      // A failed item was settled elsewhere (its card says by whom) or is still pending with its reason.
      for (const f of failed) {
        const row = bulkRows.find((r) => r.id === f.approvalId);
        if (row) kept.keepLost(row, decision);
      }
      setErrors((e) => ({ ...e, ...Object.fromEntries(failed.map((f) => [f.approvalId, f.error ?? "Not decided."])) }));
      setBulk(new Set());
    } catch {
      for (const r of bulkRows) kept.release(r.id);
    } finally {
      refresh();
    }
  };

  // ── keyboard ─────────────────────────────────────────────────────────────────
  const state = useRef({ rows, selectedId, confirming, help });
  state.current = { rows, selectedId, confirming, help };
  const handlers = useRef({ decide, select, setBulk, setHelp, router });
  handlers.current = { decide, select, setBulk, setHelp, router };
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
      const { rows: list, selectedId: current, confirming: dialog } = state.current;
      if (dialog) return;
      const h = handlers.current;
      const index = current ? list.findIndex((r) => r.id === current) : -1;
      const selected = index >= 0 ? list[index] : undefined;
      switch (event.key) {
        case "j":
        case "k": {
          if (list.length === 0) return;
          const next = event.key === "j" ? Math.min(index + 1, list.length - 1) : Math.max(index < 0 ? 0 : index - 1, 0);
          h.select(list[next]?.id ?? null);
          break;
        }
        case "a":
        case "d":
          if (!selected) return;
          h.decide(selected, event.key === "a" ? "approve" : "deny");
          break;
        case "x":
          if (!selected || !bulkable(selected)) return;
          h.setBulk((prev) => {
            const next = new Set(prev);
            if (next.has(selected.id)) next.delete(selected.id);
            else next.add(selected.id);
            return next;
          });
          break;
        case "o":
          if (!selected) return;
          h.router.push(`/responses/${selected.responseId}`);
          break;
        case "?":
          h.setHelp((v) => !v);
          break;
        case "Escape":
          h.setHelp(false);
          h.setBulk(new Set());
          return;
        default:
          return;
      }
      event.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  const count = rows.length;
  // Pending cards and the kept ones (own notes, cards settled elsewhere) in the queue's own order.
  const shownKept = kept.kept.filter((k) => !rows.some((r) => r.id === k.row.id));
  const entries = [...rows.map((row) => ({ kind: "pending" as const, row })), ...shownKept].sort(
    (x, y) => x.row.createdAt.localeCompare(y.row.createdAt) || x.row.id.localeCompare(y.row.id),
  );
  const agentOptions = (agents.data ?? []).map((a) => ({ value: a.name, label: a.name }));
  const peopleOptions = (people.data ?? []).map((p) => ({ value: p.id, label: p.name }));
  const decidedRows = decided.data?.pages.flatMap((p) => p.rows) ?? [];

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Approvals</h1>
          <p className="muted">Agents wait here until a person approves or denies the exact action.</p>
        </div>
        <LiveIndicator live={live} />
      </div>
      <p className="visually-hidden" aria-live="polite">
        {announcement}
      </p>
      {questionCount > 0 ? (
        <p className="notice notice-questions" data-testid="questions-waiting">
          <strong>{questionCount}</strong> {questionCount === 1 ? "question is" : "questions are"} also waiting for a person&apos;s answer.{" "}
          <Link href="/questions">Open Questions</Link>
        </p>
      ) : null}

      <div className="filter-bar" data-testid="inbox-filters">
        <SelectFilter label="Agent" value={agent} onChange={setAgent} options={agentOptions} testId="filter-agent" />
        {seesEveryone ? <SelectFilter label="User" value={userId} onChange={setUserId} options={peopleOptions} testId="filter-user" /> : null}
        <ToggleGroup label="Risk" values={RISKS} selected={risks} onChange={setRisks} testId="filter-risk" />
        <SelectFilter
          label="Reviewer verdict"
          value={reviewer}
          onChange={setReviewer}
          options={[
            { value: "ask", label: "Reviewer asked a person" },
            { value: "none", label: "No reviewer (always ask)" },
          ]}
          testId="filter-reviewer"
        />
        <SelectFilter label="Age" value={age} onChange={setAge} options={AGES} testId="filter-age" />
      </div>

      <div className="shortcut-bar" data-testid="shortcut-hint">
        {canDecide ? (
          <span>
            <Kbd>j</Kbd>/<Kbd>k</Kbd> move · <Kbd>a</Kbd> approve · <Kbd>d</Kbd> deny · <Kbd>x</Kbd> select · <Kbd>o</Kbd> open response · <Kbd>?</Kbd> all shortcuts
          </span>
        ) : (
          <span>
            <Kbd>j</Kbd>/<Kbd>k</Kbd> move · <Kbd>o</Kbd> open response — read-only: your role cannot decide.
          </span>
        )}
      </div>
      {help ? <ShortcutsHelp /> : null}
      {canDecide && bulk.size > 0 ? (
        <section className="bulk-bar" aria-label="Bulk decision" data-testid="bulk-bar">
          <strong>{bulk.size} selected</strong>
          <button type="button" className="btn btn-approve btn-small" disabled={decideMany.isPending} onClick={() => void sendBulk("approve")}>
            Approve selected
          </button>
          <button type="button" className="btn btn-deny btn-small" disabled={decideMany.isPending} onClick={() => void sendBulk("deny")}>
            Deny selected
          </button>
          <button type="button" className="btn btn-quiet btn-small" onClick={() => setBulk(new Set())}>
            Clear
          </button>
          <span className="muted small">High-risk requests are never decided in bulk.</span>
          {decideMany.error ? (
            <span role="alert" className="error-text">
              {errorSentence(decideMany.error, "decide")}
            </span>
          ) : null}
        </section>
      ) : null}

      <section aria-labelledby="pending-title" className="section">
        <h2 id="pending-title" ref={pendingHeading} tabIndex={-1}>
          Pending <span className="count" data-testid="pending-count">{count}</span>
          {filtered ? <span className="muted small"> (filtered)</span> : null}
        </h2>
        {pending.error ? (
          <p role="alert" className="error-box">
            {errorSentence(pending.error, "load")}
          </p>
        ) : pending.isPending ? (
          <p className="muted">Loading…</p>
        ) : (
          <>
            {bulkNote ? (
              <div className="decision-note" role="status" data-testid="bulk-note">
                <span className="decision-note-text">{bulkNote}</span>
                <button type="button" className="btn btn-quiet btn-small" onClick={() => setBulkNote(null)}>
                  Dismiss
                </button>
              </div>
            ) : null}
            {count === 0 ? (
              <div className="empty">
                <strong>All clear.</strong> {filtered ? "No pending request matches these filters." : "No agent is waiting for a decision. New requests appear here automatically."}
              </div>
            ) : null}
            {count > 0 || shownKept.length > 0 ? (
              <div className="stack" data-testid="pending-list">
                {entries.map((entry) =>
                  entry.kind === "mine" ? (
                    <DecisionNote key={entry.row.id} note={entry} onDismiss={() => kept.dismiss(entry.row.id)} />
                  ) : entry.kind === "lost" ? (
                    <SettledCard key={entry.row.id} card={entry} outcome={kept.outcomeOf.get(entry.row.id)} myId={me?.userId ?? null} onDismiss={() => kept.dismiss(entry.row.id)} />
                  ) : (
                    <ApprovalCard
                      key={entry.row.id}
                      ref={(el) => {
                        if (el) cards.current.set(entry.row.id, el);
                        else cards.current.delete(entry.row.id);
                      }}
                      approval={entry.row}
                      selected={entry.row.id === selectedId}
                      canDecide={canDecide}
                      busy={busy.has(entry.row.id)}
                      error={errors[entry.row.id] ?? null}
                      bulkChecked={bulk.has(entry.row.id)}
                      onSelect={() => select(entry.row.id, false)}
                      onDecide={(d, extra) => decide(entry.row, d, extra)}
                      onBulkToggle={() =>
                        setBulk((prev) => {
                          const next = new Set(prev);
                          if (next.has(entry.row.id)) next.delete(entry.row.id);
                          else next.add(entry.row.id);
                          return next;
                        })
                      }
                    />
                  ),
                )}
              </div>
            ) : null}
          </>
        )}
      </section>

      <section aria-labelledby="decided-title" className="section">
        <h2 id="decided-title">Decided</h2>
        {decided.error ? (
          <p role="alert" className="error-box">
            {errorSentence(decided.error, "load")}
          </p>
        ) : decided.isPending ? (
          <p className="muted">Loading…</p>
        ) : (
          <>
            <DecidedList rows={decidedRows} />
            {decided.hasNextPage ? (
              <p>
                <button type="button" className="btn btn-quiet" onClick={() => void decided.fetchNextPage()} disabled={decided.isFetchingNextPage}>
                  {decided.isFetchingNextPage ? "Loading…" : "Load older decisions"}
                </button>
              </p>
            ) : null}
          </>
        )}
      </section>

      <DecisionConfirm
        confirming={confirming}
        onCancel={() => setConfirming(null)}
        onConfirm={(c) => {
          setConfirming(null);
          void send(c.a, "approve", c.extra);
        }}
      />
    </>
  );
}
