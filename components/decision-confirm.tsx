"use client";

import type { TInboxRow } from "./api-types";
import { abbreviateIn, ArgsView } from "./args-view";
import { RiskBadge } from "./badges";
import { ConfirmDialog } from "./confirm-dialog";
import type { TDecisionExtra, TGrantChoice } from "./decision-options";
import { formatTimestamp } from "./time-labels";

export type TConfirming = { a: TInboxRow; extra: TDecisionExtra };

const dayCount = (days: number): string => `${days} day${days === 1 ? "" : "s"}`;

/** The scope of a standing grant as a button label: "for this session", "for 3 days". */
export const grantLabel = (grant: TGrantChoice): string => (grant === "session" ? "for this session" : `for ${dayCount(grant.days)}`);

/** Exactly what a grant allows, in one sentence (the server's rule: same user, agent, action and arguments). */
function GrantScope({ a, grant }: { a: TInboxRow; grant: TGrantChoice }) {
  const until = grant === "session" ? null : formatTimestamp(new Date(Date.now() + grant.days * 86_400_000).toISOString());
  return (
    <div className="notice grant-scope" data-testid="grant-scope">
      <p>
        <strong>
          Allow <code>{a.action}</code> with exactly these arguments {grant === "session" ? "for the rest of this session" : `for ${dayCount(grant.days)}`}.
        </strong>
      </p>
      <p className="small">
        {grant === "session" ? (
          <>
            Until session <code>{a.sessionId}</code> ends, the same call runs without asking anyone.
          </>
        ) : (
          <>
            Until {until}, the same call runs without asking anyone, in any session {a.user} runs with agent {a.agent}.
          </>
        )}{" "}
        Any other arguments still ask. You can revoke the grant on the Grants page.
      </p>
    </div>
  );
}

/**
 * The confirmation before an approval that needs one: a high-risk action, or any standing grant
 * (a grant is never chosen by focus or by default; it is confirmed here with its scope named).
 */
export function DecisionConfirm({ confirming, onCancel, onConfirm }: { confirming: TConfirming | null; onCancel: () => void; onConfirm: (c: TConfirming) => void }) {
  const grant = confirming?.extra.grant;
  const high = confirming?.a.risk === "high";
  const title = grant ? `Approve and allow ${grantLabel(grant)}?` : "Approve a high-risk action?";
  const label = grant ? `Approve and allow ${grantLabel(grant)}` : "Approve high-risk action";
  return (
    <ConfirmDialog open={confirming !== null} title={title} confirmLabel={label} onCancel={onCancel} onConfirm={() => confirming && onConfirm(confirming)} testId={grant ? "confirm-grant" : "confirm-high-risk"}>
      {confirming ? (
        <>
          <p>
            <RiskBadge risk={confirming.a.risk} /> <code>{confirming.a.action}</code> for {confirming.a.user} ({confirming.a.agent})
          </p>
          <p className="approval-message">{abbreviateIn(confirming.a.message, confirming.a.arguments)}</p>
          {confirming.a.reviewerRationale ? <p className="reviewer-note">Reviewer: {confirming.a.reviewerRationale}</p> : null}
          {confirming.extra.arguments ? <p className="muted small">You edited the arguments; this runs instead:</p> : null}
          <ArgsView value={confirming.extra.arguments ?? confirming.a.arguments} />
          {grant ? (
            <GrantScope a={confirming.a} grant={grant} />
          ) : (
            <p className="muted small">It runs once, exactly as shown{confirming.extra.arguments ? "" : `, in ${confirming.a.cwd ?? "no particular directory"}`}.</p>
          )}
          {grant && high ? <p className="muted small">This is a high-risk action: confirming approves it now and every identical call in that scope.</p> : null}
        </>
      ) : null}
    </ConfirmDialog>
  );
}
