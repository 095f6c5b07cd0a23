"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useTranslations } from "next-intl";
import { useEffect, useMemo, useRef, useState } from "react";
import { useActivity } from "./activity";
import { useMe } from "./app-shell";
import { ApprovalCard } from "./approval-card";
import { DecisionConfirm } from "./decision-confirm";
import type { TOptionsFocus } from "./decision-options";
import { DecisionNote, SettledCard } from "./decision-outcome";
import { Kbd } from "./filters";
import { BulkBar } from "./inbox/bulk-bar";
import { DecidedSection } from "./inbox/decided-section";
import { InboxFilterBar, useInboxFilter } from "./inbox/inbox-filter-bar";
import { InboxRow } from "./inbox/inbox-row";
import { bulkable, useInboxDecisions } from "./inbox/use-inbox-decisions";
import { useInboxKeys } from "./inbox/use-inbox-keys";
import { useInboxSelection } from "./inbox/use-inbox-selection";
import { EmptyState, ErrorState, ListSkeleton } from "./list-kit/list-states";
import { ShortcutsHelp } from "./shortcuts-help";
import { useTRPC } from "./trpc-provider";
import { useKeptDecisions } from "./use-kept-decisions";
import { LiveIndicator } from "./use-live-changes";
import { PageHead } from "./list-kit/page-head";

/**
 * The approvals inbox: one line per pending request and the selected one in full beside it;
 * keyboard triage (j/k, a, d, e, r, g, x, o, ?), bulk decisions for low/medium risk, and the
 * decided history.
 */
export function ApprovalsInbox() {
  const t = useTranslations("inbox");
  const trpc = useTRPC();
  const router = useRouter();
  const me = useMe();
  const { live } = useActivity();
  const canDecide = me?.role !== "auditor";
  const seesEveryone = me?.role !== "member";

  const filterState = useInboxFilter();
  const { filter, filtered } = filterState;
  const pending = useQuery(trpc.inbox.list.queryOptions({ status: "pending", limit: 200, ...filter }));
  const rows = useMemo(() => pending.data?.rows ?? [], [pending.data]);
  const kept = useKeptDecisions(pending.data?.rows, JSON.stringify(filter));
  const questions = useQuery(trpc.console.waiting.queryOptions());
  const questionCount = questions.data?.counts.question ?? 0;

  const { selectedId, selected, index, select: selectRow, rowRef, detail } = useInboxSelection(rows);
  const pendingHeading = useRef<HTMLHeadingElement>(null);
  const [bulk, setBulk] = useState<Set<string>>(new Set());
  const [help, setHelp] = useState(false);
  const [optionsFocus, setOptionsFocus] = useState<TOptionsFocus | null>(null);

  const decisions = useInboxDecisions({
    canDecide,
    kept,
    focusInside: (id) => !!document.activeElement && (detail.current?.dataset.approvalId === id ? detail.current.contains(document.activeElement) : false),
    safeFocus: pendingHeading,
  });

  // Bulk selection holds only pending items that may still be decided in bulk.
  useEffect(() => {
    setBulk((prev) => {
      const next = new Set([...prev].filter((id) => rows.some((r) => r.id === id && bulkable(r))));
      return next.size === prev.size ? prev : next;
    });
  }, [rows]);

  const select = (id: string | null) => {
    setOptionsFocus(null);
    selectRow(id);
  };

  const toggleBulk = (id: string) =>
    setBulk((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  const openOptions = (field: TOptionsFocus["field"]) => {
    if (!selected || !canDecide || selected.refusal !== null) return;
    setOptionsFocus((prev) => ({ field, seq: (prev?.seq ?? 0) + 1 }));
  };

  useInboxKeys({
    active: () => decisions.confirming === null,
    move: (step) => {
      if (rows.length === 0) return;
      const next = step === 1 ? Math.min(index + 1, rows.length - 1) : Math.max(index < 0 ? 0 : index - 1, 0);
      select(rows[next]?.id ?? null);
    },
    approve: () => selected && decisions.decide(selected, "approve"),
    deny: () => selected && decisions.decide(selected, "deny"),
    edit: () => openOptions("edit"),
    reply: () => openOptions("reply"),
    grant: () => openOptions("grant"),
    toggleBulk: () => selected && bulkable(selected) && toggleBulk(selected.id),
    open: () => selected && router.push(`/responses/${selected.responseId}`),
    toggleHelp: () => setHelp((v) => !v),
    escape: () => {
      setHelp(false);
      setBulk(new Set());
    },
  });

  const count = rows.length;
  // Kept items (own notes, items settled elsewhere) stay in the queue's own order until dismissed.
  const shownKept = kept.kept.filter((k) => !rows.some((r) => r.id === k.row.id));
  const entries = [...rows.map((row) => ({ kind: "pending" as const, row })), ...shownKept].sort(
    (x, y) => x.row.createdAt.localeCompare(y.row.createdAt) || x.row.id.localeCompare(y.row.id),
  );
  const bulkRows = rows.filter((r) => bulk.has(r.id));

  return (
    <>
      <PageHead
        title={t("title")}
        lede={t("lede")}
        below={
          questionCount > 0 ? (
            // One line under the title, not a banner: the list keeps the screen.
            <p className="notice-questions small" data-testid="questions-waiting">
              {t.rich("questionsWaiting", { n: questionCount, strong: (c) => <strong>{c}</strong> })} <Link href="/questions">{t("openQuestions")}</Link>
            </p>
          ) : null
        }
      >
        <LiveIndicator live={live} />
      </PageHead>
      <p className="visually-hidden" aria-live="polite">
        {decisions.announcement}
      </p>

      <InboxFilterBar state={filterState} seesEveryone={seesEveryone} />

      {help ? <ShortcutsHelp /> : null}
      {canDecide && bulk.size > 0 ? (
        <BulkBar
          count={bulk.size}
          pending={decisions.bulkPending}
          error={decisions.bulkError}
          onDecide={(d) => void decisions.sendBulk(bulkRows, d).then(() => setBulk(new Set()))}
          onClear={() => setBulk(new Set())}
        />
      ) : null}

      <section aria-labelledby="pending-title" className="section">
        <div className="pending-head">
          <h2 id="pending-title" ref={pendingHeading} tabIndex={-1}>
            {t("pending")} <span className="count" data-testid="pending-count">{count}</span>
            {filtered ? <span className="muted small"> {t("filtered")}</span> : null}
          </h2>
          <div className="shortcut-bar" data-testid="shortcut-hint">
            {canDecide ? (
              <span>{t.rich("hint", { k: (c) => <Kbd>{c}</Kbd> })}</span>
            ) : (
              <span>{t.rich("hintReadOnly", { k: (c) => <Kbd>{c}</Kbd> })}</span>
            )}
          </div>
        </div>
        {decisions.bulkNote ? (
          <div className="decision-note" role="status" data-testid="bulk-note">
            <span className="decision-note-text">{decisions.bulkNote}</span>
            <button type="button" className="btn btn-quiet btn-small" onClick={() => decisions.setBulkNote(null)}>
              {t("dismiss")}
            </button>
          </div>
        ) : null}
        {pending.error ? (
          <ErrorState error={pending.error} />
        ) : pending.isPending ? (
          <ListSkeleton rows={8} columns={6} />
        ) : count === 0 && shownKept.length === 0 ? (
          <EmptyState>
            <strong>{t("allClear")}</strong> {filtered ? t("noneMatch") : t("noneWaiting")}
          </EmptyState>
        ) : (
          <div className="inbox-split">
            <ol className="inbox-list" data-testid="pending-list" aria-label={t("pendingList")}>
              {entries.map((entry) =>
                entry.kind === "mine" ? (
                  <li key={entry.row.id} className="inbox-kept">
                    <DecisionNote note={entry} onDismiss={() => kept.dismiss(entry.row.id)} />
                  </li>
                ) : entry.kind === "lost" ? (
                  <li key={entry.row.id} className="inbox-kept">
                    <SettledCard card={entry} outcome={kept.outcomeOf.get(entry.row.id)} myId={me?.userId ?? null} onDismiss={() => kept.dismiss(entry.row.id)} />
                  </li>
                ) : (
                  <InboxRow
                    key={entry.row.id}
                    ref={rowRef(entry.row.id)}
                    approval={entry.row}
                    selected={entry.row.id === selectedId}
                    error={entry.row.id === selectedId ? null : (decisions.errors[entry.row.id] ?? null)}
                    bulk={canDecide && entry.row.refusal === null ? { checked: bulk.has(entry.row.id), disabled: !bulkable(entry.row), onToggle: () => toggleBulk(entry.row.id) } : null}
                    onSelect={() => select(entry.row.id)}
                  />
                ),
              )}
            </ol>
            <div className="inbox-detail">
              {selected ? (
                <ApprovalCard
                  key={selected.id}
                  ref={detail}
                  approval={selected}
                  selected={true}
                  canDecide={canDecide}
                  busy={decisions.busy.has(selected.id)}
                  error={decisions.errors[selected.id] ?? null}
                  bulkChecked={bulk.has(selected.id)}
                  optionsFocus={optionsFocus}
                  onSelect={() => undefined}
                  onDecide={(d, extra) => decisions.decide(selected, d, extra)}
                  onBulkToggle={() => toggleBulk(selected.id)}
                />
              ) : (
                <p className="muted inbox-detail-empty">{t("selectOne")}</p>
              )}
            </div>
          </div>
        )}
      </section>

      <DecidedSection filter={filter} />

      <DecisionConfirm
        confirming={decisions.confirming}
        onCancel={() => decisions.setConfirming(null)}
        onConfirm={(c) => {
          decisions.setConfirming(null);
          void decisions.send(c.a, "approve", c.extra);
        }}
      />
    </>
  );
}
