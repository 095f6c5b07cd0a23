"use client";

import { useTranslations } from "next-intl";
import { forwardRef } from "react";
import type { TInboxRow } from "../api-types";
import { RISK_CLASS, RISK_EDGE_CLASS } from "../badges";
import { useServerText, useVocab } from "../list-kit/labels";
import { Countdown, TimeAgo } from "../time-labels";
import { Person } from "../person";

type TProps = {
  approval: TInboxRow;
  selected: boolean;
  /** Why the last decision of this item failed (shown in full in the detail pane once selected). */
  error: string | null;
  /** Shown (for those who may decide) when the row may join a bulk decision; disabled for high risk. */
  bulk: { checked: boolean; disabled: boolean; onToggle: () => void } | null;
  onSelect: () => void;
};

/** The operation in one line: the request's summary (in the page's language) without its question mark, else the tool and arguments. */
export const operationSummary = (summary: string, args: unknown): string => {
  const text = summary.trim() || JSON.stringify(args);
  return text.replace(/[?？]$/, "").replace(/\s+/g, " ");
};

/** One pending approval as one line of the compact inbox: risk, tool, operation, requester, agent, age, expiry. */
export const InboxRow = forwardRef<HTMLLIElement, TProps>(function InboxRow({ approval: a, selected, error, bulk, onSelect }, ref) {
  const t = useTranslations("inbox.row");
  const vocab = useVocab();
  const summary = useServerText().summary(a);
  return (
    <li ref={ref} className={`inbox-row ${RISK_EDGE_CLASS[a.risk] ?? ""}${selected ? " selected" : ""}`} data-testid="inbox-row" data-approval-id={a.id} data-selected={selected ? "true" : "false"}>
      {bulk ? (
        <input
          type="checkbox"
          className="inbox-row-check"
          checked={bulk.checked}
          disabled={bulk.disabled}
          onChange={bulk.onToggle}
          aria-label={t("selectFor", { action: a.action })}
          title={bulk.disabled ? t("oneByOne") : t("selectHint")}
        />
      ) : null}
      <button type="button" className="inbox-row-main" aria-current={selected ? "true" : undefined} onClick={onSelect}>
        {/* The risk in one word (the badge's colour and the detail pane say "… risk" in full). */}
        <span className={`badge ${RISK_CLASS[a.risk] ?? ""}`} title={t("riskTitle", { risk: vocab.risk(a.risk) })}>
          {vocab.risk(a.risk)}
        </span>
        <code className="inbox-row-tool">{a.action}</code>
        <span className="inbox-row-summary" title={summary} data-testid="inbox-row-summary">
          {operationSummary(summary, a.arguments)}
        </span>
        <span className="inbox-row-who">
          <Person name={a.user} email={a.userEmail} /> · {a.agent}
        </span>
        <span className="inbox-row-age">
          <TimeAgo iso={a.createdAt} />
        </span>
        <span className="inbox-row-expiry">
          <Countdown iso={a.expiresAt} />
        </span>
      </button>
      {error ? (
        <p className="inbox-row-error error-text small" data-testid="row-error">
          {error}
        </p>
      ) : null}
    </li>
  );
});
