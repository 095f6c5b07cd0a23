"use client";

import { useServerText } from "./list-kit/labels";
import { useTranslations } from "next-intl";
import type { TInboxRow } from "./api-types";
import { ArgsView, abbreviateIn, useArgsWords } from "./args-view";
import { RiskBadge } from "./badges";
import { ConfirmDialog } from "./confirm-dialog";
import type { TDecisionExtra, TGrantChoice } from "./decision-options";
import { personLabel } from "./person";
import { useFormatTimestamp } from "./time-labels";

export type TConfirming = { a: TInboxRow; extra: TDecisionExtra };

/** A grant's scope as the messages take it: `days` 0 for the session. */
const scope = (grant: TGrantChoice) => (grant === "session" ? { scope: "session", days: 0 } : { scope: "days", days: grant.days });

/** Exactly what a grant allows, in one sentence (the server's rule: same user, agent, action and arguments). */
function GrantScope({ a, grant }: { a: TInboxRow; grant: TGrantChoice }) {
  const t = useTranslations("decisionConfirm");
  const formatTimestamp = useFormatTimestamp();
  const until = grant === "session" ? "" : formatTimestamp(new Date(Date.now() + grant.days * 86_400_000).toISOString());
  const code = (c: React.ReactNode) => <code>{c}</code>;
  return (
    <div className="notice grant-scope" data-testid="grant-scope">
      <p>
        <strong>{t.rich("allow", { action: a.action, ...scope(grant), code })}</strong>
      </p>
      <p className="small">
        {grant === "session" ? t.rich("untilSession", { session: a.sessionId, code }) : t("untilDate", { until, user: personLabel({ name: a.user, email: a.userEmail }), agent: a.agent })} {t("otherArgs")}
      </p>
    </div>
  );
}

/**
 * The confirmation before an approval that needs one: a high-risk action, or any standing grant
 * (a grant is never chosen by focus or by default; it is confirmed here with its scope named).
 */
export function DecisionConfirm({ confirming, onCancel, onConfirm }: { confirming: TConfirming | null; onCancel: () => void; onConfirm: (c: TConfirming) => void }) {
  const t = useTranslations("decisionConfirm");
  const words = useArgsWords();
  const grant = confirming?.extra.grant;
  const serverText = useServerText();
  const high = confirming?.a.risk === "high";
  const title = grant ? t("grantTitle", scope(grant)) : t("highTitle");
  const label = grant ? t("grantConfirm", scope(grant)) : t("highConfirm");
  return (
    <ConfirmDialog open={confirming !== null} title={title} confirmLabel={label} onCancel={onCancel} onConfirm={() => confirming && onConfirm(confirming)} testId={grant ? "confirm-grant" : "confirm-high-risk"}>
      {confirming ? (
        <>
          <p>
            <RiskBadge risk={confirming.a.risk} /> {t.rich("forWhom", { action: confirming.a.action, user: personLabel({ name: confirming.a.user, email: confirming.a.userEmail }), agent: confirming.a.agent, code: (c) => <code>{c}</code> })}
          </p>
          <p className="approval-message">{abbreviateIn(serverText.summary(confirming.a), confirming.a.arguments, words)}</p>
          {confirming.a.reviewerRationale ? <p className="reviewer-note">{t("reviewer", { rationale: serverText.rationale(confirming.a.reviewerRationale, confirming.a.reviewerRationaleCode) ?? "" })}</p> : null}
          {confirming.extra.arguments ? <p className="muted small">{t("editedRuns")}</p> : null}
          <ArgsView value={confirming.extra.arguments ?? confirming.a.arguments} />
          {grant ? (
            <GrantScope a={confirming.a} grant={grant} />
          ) : (
            <p className="muted small">{confirming.extra.arguments ? t("runsOnce") : confirming.a.cwd ? t("runsOnceIn", { cwd: confirming.a.cwd }) : t("runsOnceNoDir")}</p>
          )}
          {grant && high ? <p className="muted small">{t("highGrant")}</p> : null}
        </>
      ) : null}
    </ConfirmDialog>
  );
}
