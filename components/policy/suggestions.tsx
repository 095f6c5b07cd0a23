"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useLocale, useTranslations } from "next-intl";
import { useRef, useState } from "react";
import { OutcomeBadge } from "../analytics/outcomes";
import { isOutcome } from "../analytics/query-state";
import { CompactArgs } from "../analytics/request-lists";
import type { TOutputs, TSuggestionView } from "../api-types";
import { ArgsView } from "../args-view";
import { ConfirmDialog } from "../confirm-dialog";
import { SelectFilter } from "../filters";
import { FilterBar } from "../list-kit/filter-bar";
import { EmptyState, ErrorState, ListSkeleton } from "../list-kit/list-states";
import { UnifiedDiff } from "../operation-view";
import { useFormatTimestamp } from "../time-labels";
import { useTRPC } from "../trpc-provider";
import { TwoStepAction } from "../two-step-action";
import { type TWindow, usePolicyWindow, WINDOWS } from "./policy-state";
import { usePolicyErrorSentence } from "./server-sentence";

type TApplied = TOutputs["policy"]["applySuggestion"];
/** What the last apply or dismiss did, shown above the list (the card itself may be gone). */
type TNotice = { kind: "applied"; result: TApplied } | { kind: "dismissed"; suggestion: TSuggestionView; days: number } | { kind: "failed"; what: "apply" | "dismiss"; suggestion: TSuggestionView; error: unknown };

/** A kind's badge class, spelled out whole (scripts/css-selectors.test.ts finds each class in the source). */
const KIND_TONE: Record<TSuggestionView["kind"], string> = { loosen: "tone-ok", tighten: "tone-warn", promote: "tone-info" };
/** A kind's badge text. */
const KIND_LABEL = { loosen: "askLess", tighten: "askMore", promote: "promote" } as const satisfies Record<TSuggestionView["kind"], string>;

/** What a suggestion changes, in a sentence's words: its action, or the agent's shadow policy. */
const subjectOf = (s: TSuggestionView, t: ReturnType<typeof useTranslations<"policy">>): string => (s.kind === "promote" ? t("shadowSubject") : s.action);

/** Saves `value` as a JSON file the browser downloads (nothing goes to the server). */
function downloadJson(value: unknown, name: string) {
  const url = URL.createObjectURL(new Blob([`${JSON.stringify(value, null, 2)}\n`], { type: "application/json" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // After the download has taken the blob.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * Rule suggestions (`policy.suggestions`) of the window in the address, each with its evidence,
 * the exact arguments, the latest requests it matches (each linking to its response) and the
 * change as a diff of the agents file. Admins apply one (after confirming) or dismiss it; the
 * others read them.
 */
export function Suggestions({ admin }: { admin: boolean }) {
  const t = useTranslations("policy");
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { days, go } = usePolicyWindow();
  const n = Number(days);
  const list = useQuery(trpc.policy.suggestions.queryOptions({ days: n }, { placeholderData: (prev) => prev }));
  const [notice, setNotice] = useState<TNotice | null>(null);
  const [confirming, setConfirming] = useState<TSuggestionView | null>(null);
  const [dismissAsking, setDismissAsking] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const refresh = async () => {
    await queryClient.invalidateQueries(trpc.policy.suggestions.pathFilter());
  };
  const apply = useMutation(
    trpc.policy.applySuggestion.mutationOptions({
      onSettled: async () => {
        await refresh();
        await queryClient.invalidateQueries(trpc.admin.agentsConfig.pathFilter());
        await queryClient.invalidateQueries(trpc.console.agents.pathFilter());
      },
    }),
  );
  const dismiss = useMutation(trpc.policy.dismissSuggestion.mutationOptions({ onSettled: refresh }));
  const busy = apply.isPending || dismiss.isPending || list.isPlaceholderData;
  // The list changed under the card: the keyboard's place is the section's heading.
  const backToHeading = () => requestAnimationFrame(() => heading.current?.focus());

  const doApply = (s: TSuggestionView) => {
    setConfirming(null);
    setNotice(null);
    apply.mutate(
      { id: s.id, days: n },
      {
        onSuccess: (result) => setNotice({ kind: "applied", result }),
        onError: (error) => setNotice({ kind: "failed", what: "apply", suggestion: s, error }),
        onSettled: backToHeading,
      },
    );
  };
  const doDismiss = (s: TSuggestionView) => {
    setDismissAsking(null);
    setNotice(null);
    dismiss.mutate(
      { id: s.id, days: n },
      {
        onSuccess: () => setNotice({ kind: "dismissed", suggestion: s, days: n }),
        onError: (error) => setNotice({ kind: "failed", what: "dismiss", suggestion: s, error }),
        onSettled: backToHeading,
      },
    );
  };

  const rows = list.data ?? [];
  return (
    <section className="section" aria-labelledby="policy-suggestions-title" data-testid="policy-suggestions">
      <h2 id="policy-suggestions-title" ref={heading} tabIndex={-1}>
        {t("suggestions")}
      </h2>
      <p className="muted small">{t("suggestionsHint")}</p>
      <FilterBar testId="suggestions-filters">
        <SelectFilter label={t("window")} value={days} onChange={(d) => go(d as TWindow)} options={WINDOWS.map((w) => ({ value: w, label: t("last", { n: Number(w) }) }))} anyLabel={null} testId="suggestions-window" />
      </FilterBar>
      {notice ? <Notice notice={notice} /> : null}
      {list.error ? (
        <ErrorState error={list.error} />
      ) : !list.data ? (
        <ListSkeleton rows={4} columns={4} />
      ) : rows.length === 0 ? (
        <EmptyState testId="suggestions-empty">
          <strong>{t("empty", { n })}</strong> {t("emptyHint")}
        </EmptyState>
      ) : (
        <ul className="policy-suggestions" aria-busy={list.isPlaceholderData} data-testid="suggestions-list">
          {rows.map((s) => (
            <li key={s.id}>
              <SuggestionCard
                s={s}
                admin={admin}
                busy={busy}
                dismissAsking={dismissAsking === s.id}
                onApply={() => setConfirming(s)}
                onDismissAsk={() => setDismissAsking(s.id)}
                onDismissCancel={() => setDismissAsking(null)}
                onDismiss={() => doDismiss(s)}
              />
            </li>
          ))}
        </ul>
      )}
      <ConfirmDialog
        open={confirming !== null}
        title={t("applyTitle")}
        confirmLabel={t("applyConfirm")}
        onConfirm={() => confirming && doApply(confirming)}
        onCancel={() => setConfirming(null)}
        testId="apply-dialog"
      >
        {confirming ? (
          <>
            <p>
              {confirming.kind === "promote"
                ? t.rich("applyBodyPromote", { agent: confirming.agent, target: confirming.target ?? "", code: (c) => <code>{c}</code> })
                : t.rich("applyBody", { action: confirming.action, agent: confirming.agent, target: confirming.target ?? "", code: (c) => <code>{c}</code> })}
            </p>
            <p className="muted small">{t("applyHow")}</p>
          </>
        ) : null}
      </ConfirmDialog>
    </section>
  );
}

/** The outcome of the last apply or dismiss: the backup and the reload, or the server's sentence. */
function Notice({ notice }: { notice: TNotice }) {
  const t = useTranslations("policy");
  const sentence = usePolicyErrorSentence();
  if (notice.kind === "failed") {
    const { agent } = notice.suggestion;
    const action = subjectOf(notice.suggestion, t);
    return (
      <p role="alert" className="error-box" data-testid="suggestion-failed">
        {t(notice.what === "apply" ? "applyFailed" : "dismissFailed", { action, agent, reason: sentence(notice.error, "change") })}
      </p>
    );
  }
  if (notice.kind === "dismissed") {
    return (
      <p role="status" className="notice notice-sent" data-testid="suggestion-dismissed">
        {t("dismissed", { action: subjectOf(notice.suggestion, t), agent: notice.suggestion.agent, n: notice.days })}
      </p>
    );
  }
  const { applied, backup, reload } = notice.result;
  return (
    <div role="status" className={reload.ok ? "notice notice-sent" : "error-box"} data-testid="suggestion-applied">
      <p>{t.rich("applied", { target: applied.target ?? "", backup, code: (c) => <code data-testid="applied-backup">{c}</code> })}</p>
      <p>{reload.ok ? t("reloaded", { agents: reload.agents.join(", ") }) : t("reloadFailed", { error: reload.error })}</p>
    </div>
  );
}

function SuggestionCard({
  s,
  admin,
  busy,
  dismissAsking,
  onApply,
  onDismissAsk,
  onDismissCancel,
  onDismiss,
}: {
  s: TSuggestionView;
  admin: boolean;
  busy: boolean;
  dismissAsking: boolean;
  onApply: () => void;
  onDismissAsk: () => void;
  onDismissCancel: () => void;
  onDismiss: () => void;
}) {
  const t = useTranslations("policy");
  const locale = useLocale();
  const stamp = useFormatTimestamp();
  const fmt = (v: number) => v.toLocaleString(locale);
  const e = s.evidence;
  const titleId = `suggestion-${s.id}`;
  const hasFile = s.file !== undefined && s.file !== null;
  const promote = s.kind === "promote";
  return (
    <article className="card policy-suggestion" aria-labelledby={titleId} data-testid="suggestion" data-suggestion-id={s.id} data-kind={s.kind}>
      <header className="policy-suggestion-head">
        <span className={`badge ${KIND_TONE[s.kind]}`} data-testid="suggestion-kind">
          {t(KIND_LABEL[s.kind])}
        </span>
        <h3 id={titleId}>
          {promote ? (
            t("promoteTitle", { agent: s.agent })
          ) : (
            <>
              <code>{s.action}</code> <span className="muted">{t("forAgent", { agent: s.agent })}</span>
            </>
          )}
        </h3>
        {s.external ? <span className="badge tone-muted">{t("external")}</span> : null}
      </header>
      <p className="policy-summary" data-testid="suggestion-summary">
        {e.summary}
      </p>
      {promote && s.shadow ? (
        <ShadowCounts shadow={s.shadow} days={e.days} from={e.from} to={e.to} />
      ) : (
        <dl className="facts policy-counts" data-testid="suggestion-counts">
          <div>
            <dt>{t("requests")}</dt>
            <dd data-testid="count-requests">{fmt(e.requests)}</dd>
          </div>
          <div>
            <dt>{t("approved")}</dt>
            <dd data-testid="count-approved">{fmt(e.approved)}</dd>
          </div>
          <div>
            <dt>{t("denied")}</dt>
            <dd data-testid="count-denied">{fmt(e.denied)}</dd>
          </div>
          <div>
            <dt>{t("people", { kind: s.kind })}</dt>
            <dd data-testid="count-people">{fmt(e.people)}</dd>
          </div>
          <div className="wide">
            <dt>{t("windowOf", { n: e.days })}</dt>
            <dd>{t("between", { from: stamp(e.from), to: stamp(e.to) })}</dd>
          </div>
        </dl>
      )}
      {s.arguments !== null && s.arguments !== undefined ? (
        <div className="policy-block">
          <h4 className="label">{t("arguments")}</h4>
          <ArgsView value={s.arguments} />
        </div>
      ) : null}
      <div className="policy-block">
        <h4 className="label">{t("rule")}</h4>
        {promote ? (
          <p className="small">{t.rich("rulePromote", { target: s.target ?? "", code: (c) => <code>{c}</code> })}</p>
        ) : (
          <>
            <p className="small">{s.target ? t.rich("ruleAt", { target: s.target, code: (c) => <code>{c}</code> }) : t("ruleNoTarget")}</p>
            <CompactArgs value={s.predicate} max={160} />
          </>
        )}
      </div>
      {e.matched.length > 0 ? (
        <div className="policy-block">
          <h4 className="label">{t("matched")}</h4>
          <ul className="policy-matched" data-testid="matched-requests">
            {e.matched.map((m) => (
              <li key={m.id} data-testid="matched-request" data-response-id={m.responseId}>
                <span className="nowrap small">{stamp(m.createdAt)}</span> {isOutcome(m.outcome) ? <OutcomeBadge outcome={m.outcome} /> : <span className="badge tone-muted">{m.outcome}</span>}{" "}
                <Link href={`/responses/${m.responseId}`} aria-label={t("openResponse", { id: m.responseId })}>
                  <code>{m.responseId}</code>
                </Link>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {s.diff ? (
        <details className="policy-block policy-diff" open>
          <summary className="label">{t("diff")}</summary>
          <UnifiedDiff text={s.diff} testId="suggestion-diff" />
        </details>
      ) : null}
      {!s.appliable && s.reason ? (
        <p className="notice policy-reason" data-testid="suggestion-reason">
          <strong>{t("notAppliable")}</strong> {s.reason}
        </p>
      ) : null}
      {hasFile || admin ? (
        <div className="actions">
          {hasFile ? (
            <button type="button" className="btn" onClick={() => downloadJson(s.file, "agents.json")} data-testid="download-agents-file">
              {t("download")}
            </button>
          ) : null}
          {admin && s.appliable ? (
            <button type="button" className="btn btn-approve" onClick={onApply} disabled={busy} data-testid="apply-suggestion">
              {t("apply")}
            </button>
          ) : null}
          {admin ? (
            <TwoStepAction
              asking={dismissAsking}
              onAsk={onDismissAsk}
              onCancel={onDismissCancel}
              onConfirm={onDismiss}
              label={t("dismiss")}
              confirmLabel={t("dismissConfirm")}
              askClassName="btn btn-quiet"
              busy={busy}
              ariaLabel={t("dismissLabel", { action: subjectOf(s, t), agent: s.agent })}
              testId="dismiss-suggestion"
            />
          ) : null}
        </div>
      ) : null}
    </article>
  );
}

/** What an agent's shadow policy would have decided differently in the window (a promotion's evidence). */
function ShadowCounts({ shadow, days, from, to }: { shadow: NonNullable<TSuggestionView["shadow"]>; days: number; from: string; to: string }) {
  const t = useTranslations("policy");
  const locale = useLocale();
  const stamp = useFormatTimestamp();
  const fmt = (v: number) => v.toLocaleString(locale);
  const danger = shadow.wouldAutoApproveDenied + shadow.wouldAutoApproveEdited;
  return (
    <>
      <dl className="facts policy-counts" data-testid="suggestion-counts">
        <div>
          <dt>{t("shadowDiffered")}</dt>
          <dd data-testid="count-differed">{fmt(shadow.differed)}</dd>
        </div>
        <div>
          <dt>{t("shadowWouldAutoApprove")}</dt>
          <dd data-testid="count-would-auto-approve">{fmt(shadow.wouldAutoApprove)}</dd>
        </div>
        <div>
          <dt>{t("fig.nowWithoutPersonDenied")}</dt>
          <dd data-testid="count-would-auto-approve-denied">{fmt(shadow.wouldAutoApproveDenied)}</dd>
        </div>
        <div>
          <dt>{t("fig.nowWithoutPersonEdited")}</dt>
          <dd data-testid="count-would-auto-approve-edited">{fmt(shadow.wouldAutoApproveEdited)}</dd>
        </div>
        <div>
          <dt>{t("shadowWouldAsk")}</dt>
          <dd data-testid="count-would-ask">{fmt(shadow.wouldAsk)}</dd>
        </div>
        <div className="wide">
          <dt>{t("windowOf", { n: days })}</dt>
          <dd>{t("between", { from: stamp(from), to: stamp(to) })}</dd>
        </div>
      </dl>
      {danger > 0 ? (
        <p className="error-box" data-testid="suggestion-danger">
          {t("danger", { denied: shadow.wouldAutoApproveDenied, edited: shadow.wouldAutoApproveEdited })}
        </p>
      ) : null}
    </>
  );
}
