"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTranslations } from "next-intl";
import { forwardRef, useId } from "react";
import type { TInboxRow } from "./api-types";
import { useMe } from "./app-shell";
import { OperationArgs } from "./operation-view";
import { abbreviateIn, longStrings, useArgsWords } from "./args-view";
import { RISK_EDGE_CLASS, RiskBadge } from "./badges";
import { useServerText } from "./list-kit/labels";
import { DecisionOptions, type TDecisionExtra, type TOptionsFocus } from "./decision-options";
import { useViaLabel } from "./decision-outcome";
import { Kbd } from "./filters";
import { RunFiles } from "./output-items";
import { SessionContext } from "./session-context";
import { Countdown, TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { useNow } from "./use-now";
import { Person, personLabel } from "./person";

export type TDecision = "approve" | "deny";
export type { TDecisionExtra };

type TProps = {
  approval: TInboxRow;
  selected: boolean;
  /** False for auditors: the card is read-only (the server refuses their decisions too). Per card, `approval.refusal` says why the caller may not decide it. */
  canDecide: boolean;
  busy: boolean;
  error: string | null;
  bulkChecked: boolean;
  onSelect: () => void;
  onDecide: (decision: TDecision, extra?: TDecisionExtra) => void;
  onBulkToggle: () => void;
  /** A shortcut's request to open the decision options at one field. */
  optionsFocus?: TOptionsFocus | null;
};

/** A quorum's progress: how many of the needed approvals are in, and who voted how. */
function QuorumProgress({ approval: a }: { approval: TInboxRow }) {
  const t = useTranslations("approvalCard");
  const viaLabel = useViaLabel();
  const approvals = a.votes.filter((v) => v.decision === "approve").length;
  return (
    <div className="quorum" data-testid="quorum-progress">
      <strong>{t("quorum", { n: approvals, of: a.requiredApprovals })}</strong> <span className="muted small">{t("quorumNote")}</span>
      {a.votes.length > 0 ? (
        <ul className="quorum-votes">
          {a.votes.map((v) => (
            <li key={v.userId} data-testid="quorum-vote">
              {t("vote", { decision: v.decision, name: personLabel(v), via: viaLabel(v.via) })}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** The files of the approval's run so far: image previews and download links (nothing while none). */
function ApprovalFiles({ approvalId }: { approvalId: string }) {
  const trpc = useTRPC();
  const files = useQuery(trpc.inbox.files.queryOptions({ approvalId }, { staleTime: 30_000 }));
  return files.data ? <RunFiles files={files.data} /> : null;
}

/** One pending approval with everything needed to decide it: action, arguments, directory, reviewer, context. */
export const ApprovalCard = forwardRef<HTMLElement, TProps>(function ApprovalCard({ approval: a, selected, canDecide, busy, error, bulkChecked, onSelect, onDecide, onBulkToggle, optionsFocus = null }, ref) {
  const t = useTranslations("approvalCard");
  const rowT = useTranslations("inbox.row");
  const words = useArgsWords();
  const titleId = useId();
  const messageId = useId();
  const now = useNow(1000);
  const expired = new Date(a.expiresAt).getTime() <= now;
  const high = a.risk === "high";
  const me = useMe();
  const myVote = a.votes.find((v) => v.userId === me?.userId);
  // The server's own reasons: a button that would be refused is replaced by the sentence why.
  const serverText = useServerText();
  const notMine = (a.refusalCode ? serverText.refusal(a.refusalCode) : a.refusal) ?? (myVote ? t("alreadyVoted", { decision: myVote.decision }) : null);
  const mayAct = canDecide && notMine === null;
  const longest = Math.max(0, ...longStrings(a.arguments).map((v) => v.length));

  return (
    <article
      ref={ref}
      tabIndex={-1}
      className={`card approval ${RISK_EDGE_CLASS[a.risk] ?? ""}${selected ? " selected" : ""}`}
      aria-labelledby={titleId}
      aria-current={selected ? "true" : undefined}
      data-testid="approval"
      data-approval-id={a.id}
      data-selected={selected ? "true" : "false"}
      onFocusCapture={() => (selected ? null : onSelect())}
      onMouseDown={() => (selected ? null : onSelect())}
    >
      <header className="approval-head">
        {mayAct ? (
          <label className="bulk-check" title={high ? rowT("oneByOne") : rowT("selectHint")}>
            <input type="checkbox" checked={bulkChecked} disabled={high || expired} onChange={onBulkToggle} aria-label={rowT("selectFor", { action: a.action })} />
          </label>
        ) : null}
        <RiskBadge risk={a.risk} />
        <h3 id={titleId} className="approval-action">
          <code>{a.action}</code>
        </h3>
        <span className="approval-when">
          <span>{t.rich("requested", { ago: () => <TimeAgo iso={a.createdAt} /> })}</span>
          <Countdown iso={a.expiresAt} />
        </span>
      </header>
      <p id={messageId} className="approval-message">
        {abbreviateIn(serverText.summary(a), a.arguments, words)}
      </p>
      <section className="what-runs" aria-label={t("whatRuns")} data-testid="what-runs">
        <div className="what-runs-head">
          <span className="label">{t("arguments")}</span>
          <RiskBadge risk={a.risk} />
          {longest ? (
            <span className="muted small" data-testid="args-length">
              {t("longest", { length: words.characters(longest) })}
            </span>
          ) : null}
        </div>
        {a.reviewer ? (
          <div className="reviewer-note" data-testid="reviewer-rationale">
            <strong>{t.rich("reviewerAsked", { reviewer: a.reviewer, code: (c) => <code>{c}</code> })}</strong>{" "}
            {serverText.rationale(a.reviewerRationale, a.reviewerRationaleCode)}
          </div>
        ) : null}
        <OperationArgs action={a.action} value={a.arguments} />
        <p className="small what-runs-cwd">
          <span className="label">{t("cwd")}</span> <code>{a.cwd ?? "—"}</code>
        </p>
      </section>
      {a.requiredApprovals > 1 ? <QuorumProgress approval={a} /> : null}
      {mayAct ? (
        <div className="actions decision-bar" data-testid="decision-bar">
          <button type="button" className="btn btn-approve" onClick={() => onDecide("approve")} disabled={busy || expired} aria-describedby={messageId}>
            {t("approve")}
            {selected ? <span aria-hidden="true"><Kbd>a</Kbd></span> : null}
          </button>
          <button type="button" className="btn btn-deny" onClick={() => onDecide("deny")} disabled={busy || expired} aria-describedby={messageId}>
            {t("deny")}
            {selected ? <span aria-hidden="true"><Kbd>d</Kbd></span> : null}
          </button>
          <span className="decision-bar-what small">
            <code>{a.action}</code>
            {longest ? ` · ${words.characters(longest)}` : ""}
          </span>
          {high ? <span className="muted small">{t("highConfirm")}</span> : null}
          {busy ? <span className="muted">{t("sending")}</span> : null}
          {expired ? <span className="muted">{t("expired")}</span> : null}
        </div>
      ) : null}
      {error ? (
        <p role="alert" className="error-box" data-testid="decide-error">
          {error}
        </p>
      ) : null}
      <dl className="facts">
        <div>
          <dt>{t("agent")}</dt>
          <dd>{a.agent}</dd>
        </div>
        <div>
          <dt>{t("user")}</dt>
          <dd>
            <Person name={a.user} email={a.userEmail} />
          </dd>
        </div>
        <div>
          <dt>{t("session")}</dt>
          <dd>
            <Link href={`/sessions/${a.sessionId}`}>
              <code>{a.sessionId}</code>
            </Link>
          </dd>
        </div>
        <div>
          <dt>{t("response")}</dt>
          <dd>
            <Link href={`/responses/${a.responseId}`}>
              <code>{a.responseId}</code>
            </Link>
          </dd>
        </div>
      </dl>
      <ApprovalFiles approvalId={a.id} />
      <SessionContext approvalId={a.id} />
      {canDecide && notMine !== null ? (
        <p className="notice read-only" data-testid="decide-refusal">
          {notMine}
        </p>
      ) : null}
      {mayAct ? (
        <DecisionOptions
          arguments={a.arguments}
          options={a.options}
          busy={busy}
          disabled={expired}
          onApprove={(extra) => onDecide("approve", extra)}
          onReply={(message) => onDecide("deny", { message })}
          focus={optionsFocus}
        />
      ) : canDecide ? null : (
        <p className="notice read-only" data-testid="read-only">
          {t("readOnly")}
        </p>
      )}
    </article>
  );
});
