"use client";

import Link from "next/link";
import { useTranslations } from "next-intl";
import type { TApprovalRow, TInboxRow } from "./api-types";
import { ArgsView, abbreviateIn, type TArgsWords, useArgsWords } from "./args-view";
import { RISK_EDGE_CLASS, RiskBadge, StatusBadge } from "./badges";
import { isTransport, useServerText, useVocab } from "./list-kit/labels";
import { TimeAgo, useFormatTimestamp } from "./time-labels";
import { personLabel } from "./person";

/** How a decision reached the server (the `decided_via` transports), as a table shows it, in the page's language. */
export function useViaLabel(): (via: string | null) => string {
  const vocab = useVocab();
  return (via) => (via ? (isTransport(via) ? vocab.via(via) : via) : "—");
}

type TOutcomeT = ReturnType<typeof useTranslations<"decisionOutcome">>;

/** A decision this page sent, as the inbox keeps it in place of the card it removed. */
export type TMineNote = { kind: "mine"; row: TInboxRow; text: string };
/** A card someone else settled while it was shown (or before this page's own decision arrived). */
export type TLostCard = { kind: "lost"; row: TInboxRow; tried: "approve" | "deny" | null };
export type TKept = TMineNote | TLostCard;

/** What this page's own decision did, in one sentence naming the request. */
export function ownOutcome(
  a: TInboxRow,
  decision: "approve" | "deny",
  extra: { arguments?: unknown; message?: string; grant?: "session" | { days: number } },
  t: TOutcomeT,
  words?: TArgsWords,
  summary: (a: TInboxRow) => string = (row) => row.message,
): string {
  const what = `${a.action} (${abbreviateIn(summary(a), a.arguments, words)})`;
  if (decision === "deny") return extra.message ? t("deniedWithReply", { what }) : t("denied", { what });
  const grant = extra.grant ? (extra.grant === "session" ? "session" : "days") : "none";
  const days = typeof extra.grant === "object" ? extra.grant.days : 0;
  return t("approved", { what, edited: extra.arguments ? "yes" : "no", grant, days });
}

/** Your own decision, kept where its card was: what happened, and a way to clear the note. */
export function DecisionNote({ note, onDismiss }: { note: TMineNote; onDismiss: () => void }) {
  const t = useTranslations("decisionOutcome");
  return (
    <div className="decision-note" role="status" data-testid="decision-note" data-approval-id={note.row.id}>
      <span className="decision-note-text">{note.text}</span>
      <button type="button" className="btn btn-quiet btn-small" onClick={onDismiss}>
        {t("dismiss")}
      </button>
    </div>
  );
}

const VERBS = ["approved", "denied", "expired", "cancelled"] as const;

/** Who settled it, how, through which channel and when, as one sentence (without the time). */
function settledBy(o: TApprovalRow, myId: string | null, t: TOutcomeT): string {
  if (o.status === "expired") return t("expiredUndecided");
  const who = o.decidedByName ? personLabel({ name: o.decidedByName, email: o.decidedByEmail }) : (o.decidedBy ?? "");
  const verb = (VERBS as readonly string[]).includes(o.status) ? t(`verb.${o.status as (typeof VERBS)[number]}`) : o.status;
  const detail = o.originalArguments ? "edited" : o.replyMessage ? "reply" : o.grantId ? "grant" : "none";
  const via = !o.decidedVia ? t("viaUnknown") : isTransport(o.decidedVia) ? t(`viaPhrase.${o.decidedVia}`) : o.decidedVia;
  return t("settledBy", {
    verb,
    by: who ? "yes" : "no",
    who,
    me: who && o.decidedBy === myId ? "yes" : "no",
    detail,
    reply: o.replyMessage ?? "",
    via,
    cancelled: o.status === "cancelled" ? "yes" : "no",
  });
}

/**
 * A card that someone else settled: it stays where it was and says who decided what, when and
 * through which channel. `tried`: this page's own decision that lost the race, if any.
 */
export function SettledCard({ card, outcome, myId, onDismiss }: { card: TLostCard; outcome: TApprovalRow | undefined; myId: string | null; onDismiss: () => void }) {
  const t = useTranslations("decisionOutcome");
  const formatTimestamp = useFormatTimestamp();
  const words = useArgsWords();
  const serverText = useServerText();
  const a = card.row;
  const lost = card.tried ?? "none";
  return (
    <article className={`card approval settled ${RISK_EDGE_CLASS[a.risk] ?? ""}`} data-testid="approval-settled" data-approval-id={a.id} data-status={outcome?.status ?? "checking"} aria-label={t("settledLabel", { action: a.action })}>
      <header className="approval-head">
        {outcome ? <StatusBadge status={outcome.status} /> : null}
        <RiskBadge risk={a.risk} />
        <h3 className="approval-action">
          <code>{a.action}</code>
        </h3>
        <button type="button" className="btn btn-quiet btn-small settled-dismiss" onClick={onDismiss}>
          {t("dismiss")}
        </button>
      </header>
      <p className={`notice notice-race${card.tried ? "" : " notice-quiet"}`} role={card.tried ? "alert" : "status"} data-testid="settled-outcome">
        {outcome
          ? t.rich("settledLine", {
              tried: card.tried ? "yes" : "no",
              what: settledBy(outcome, myId, t),
              at: outcome.decidedAt ? "yes" : "no",
              lost,
              time: () => (outcome.decidedAt ? <time dateTime={outcome.decidedAt}>{formatTimestamp(outcome.decidedAt)}</time> : null),
              ago: () => (outcome.decidedAt ? <TimeAgo iso={outcome.decidedAt} /> : null),
            })
          : t("findingOut", { lost })}
      </p>
      <p className="approval-message">{abbreviateIn(serverText.summary(a), a.arguments, words)}</p>
      <ArgsView value={outcome?.arguments ?? a.arguments} />
      <p className="small">
        <Link href={`/responses/${a.responseId}`}>{t("viewResponse")}</Link>
      </p>
    </article>
  );
}
