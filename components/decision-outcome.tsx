"use client";

import Link from "next/link";
import type { TApprovalRow, TInboxRow } from "./api-types";
import { ArgsView, abbreviateIn } from "./args-view";
import { RiskBadge, StatusBadge } from "./badges";
import { formatTimestamp, TimeAgo } from "./time-labels";

/** How a decision reached the server (the `decided_via` transports), as a table shows it. */
const VIA: Record<string, string> = { console: "console", http: "HTTP API", websocket: "WebSocket", system: "system", link: "notification link", slack: "Slack" };
export const viaLabel = (via: string | null): string => (via ? (VIA[via] ?? via) : "—");
/** The same inside a sentence: "via the console", "via a notification link". */
const viaPhrase = (via: string | null): string => (via === "websocket" ? "WebSocket" : via === "link" ? "a notification link" : via === "slack" ? "Slack" : via ? `the ${viaLabel(via)}` : "an unknown channel");

/** A decision this page sent, as the inbox keeps it in place of the card it removed. */
export type TMineNote = { kind: "mine"; row: TInboxRow; text: string };
/** A card someone else settled while it was shown (or before this page's own decision arrived). */
export type TLostCard = { kind: "lost"; row: TInboxRow; tried: "approve" | "deny" | null };
export type TKept = TMineNote | TLostCard;

/** What this page's own decision did, in one sentence naming the request. */
export function ownOutcome(a: TInboxRow, decision: "approve" | "deny", extra: { arguments?: unknown; message?: string; grant?: "session" | { days: number } }): string {
  const what = `${a.action} (${abbreviateIn(a.message, a.arguments)})`;
  if (decision === "deny") return extra.message ? `You denied ${what} with a reply; the agent received it and goes on.` : `You denied ${what}; it was not run.`;
  const grant = extra.grant ? (extra.grant === "session" ? " It now runs without asking for the rest of this session." : ` It now runs without asking for ${extra.grant.days} day${extra.grant.days === 1 ? "" : "s"}.`) : "";
  return `You approved ${extra.arguments ? "the edited call of " : ""}${what}; the agent goes on.${grant}`;
}

/** Your own decision, kept where its card was: what happened, and a way to clear the note. */
export function DecisionNote({ note, onDismiss }: { note: TMineNote; onDismiss: () => void }) {
  return (
    <div className="decision-note" role="status" data-testid="decision-note" data-approval-id={note.row.id}>
      <span className="decision-note-text">{note.text}</span>
      <button type="button" className="btn btn-quiet btn-small" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}

const VERB: Record<string, string> = { approved: "Approved", denied: "Denied", expired: "Expired", cancelled: "Cancelled" };

/** Who settled it, how, through which channel and when, as one sentence (without the time). */
function settledBy(o: TApprovalRow, myId: string | null): string {
  const who = o.decidedByName ?? o.decidedBy;
  const by = who ? ` by ${who}${o.decidedBy === myId ? " (you, elsewhere)" : ""}` : "";
  if (o.status === "expired") return "Expired before anyone decided; the operation was not run";
  const detail = o.originalArguments ? " with edited arguments" : o.replyMessage ? ` with a reply (“${o.replyMessage}”)` : o.grantId ? " with a standing grant" : "";
  const cancelled = o.status === "cancelled" ? " (the response was ended)" : "";
  return `${VERB[o.status] ?? o.status}${by}${detail} via ${viaPhrase(o.decidedVia)}${cancelled}`;
}

/**
 * A card that someone else settled: it stays where it was and says who decided what, when and
 * through which channel. `tried`: this page's own decision that lost the race, if any.
 */
export function SettledCard({ card, outcome, myId, onDismiss }: { card: TLostCard; outcome: TApprovalRow | undefined; myId: string | null; onDismiss: () => void }) {
  const a = card.row;
  const lost = card.tried ? ` Your ${card.tried === "approve" ? "approval" : "denial"} was not used.` : "";
  return (
    <article className={`card approval settled risk-edge-${a.risk}`} data-testid="approval-settled" data-approval-id={a.id} data-status={outcome?.status ?? "checking"} aria-label={`${a.action}: settled elsewhere`}>
      <header className="approval-head">
        {outcome ? <StatusBadge status={outcome.status} /> : null}
        <RiskBadge risk={a.risk} />
        <h3 className="approval-action">
          <code>{a.action}</code>
        </h3>
        <button type="button" className="btn btn-quiet btn-small settled-dismiss" onClick={onDismiss}>
          Dismiss
        </button>
      </header>
      <p className={`notice notice-race${card.tried ? "" : " notice-quiet"}`} role={card.tried ? "alert" : "status"} data-testid="settled-outcome">
        {outcome ? (
          <>
            {card.tried ? "Already settled: " : "Settled while you were looking: "}
            {settledBy(outcome, myId)}
            {outcome.decidedAt ? (
              <>
                {" "}
                at <time dateTime={outcome.decidedAt}>{formatTimestamp(outcome.decidedAt)}</time> (<TimeAgo iso={outcome.decidedAt} />)
              </>
            ) : null}
            .{lost}
          </>
        ) : (
          `This request was settled elsewhere; finding out who decided it…${lost}`
        )}
      </p>
      <p className="approval-message">{abbreviateIn(a.message, a.arguments)}</p>
      <ArgsView value={outcome?.arguments ?? a.arguments} />
      <p className="small">
        <Link href={`/responses/${a.responseId}`}>View the response</Link>
      </p>
    </article>
  );
}
