import Link from "next/link";
import { useTranslations } from "next-intl";
import type { ReactNode } from "react";
import type { TRequiredActionView as TRequiredAction } from "./api-types";
import { RiskBadge } from "./badges";
import { JsonView } from "./json-view";
import { useServerText } from "./list-kit/labels";
import { Countdown, useFormatTimestamp } from "./time-labels";

/** What the response is waiting for: a human approval or a client-side tool. */
export function RequiredAction({ action }: { action: TRequiredAction }) {
  const t = useTranslations("required");
  const formatTimestamp = useFormatTimestamp();
  const serverText = useServerText();
  const code = (chunks: ReactNode) => <code>{chunks}</code>;
  if (action.type === "human_approval") {
    return (
      <div className="card callout" data-testid="required-action">
        <div className="approval-head">
          <RiskBadge risk={action.risk} />
          <strong>{t.rich("approvalOf", { action: action.action, code })}</strong>
          <Countdown iso={action.expiresAt} />
        </div>
        <p className="approval-message">{serverText.summary(action)}</p>
        {action.cwd ? (
          <p className="small">{t.rich("cwd", { cwd: action.cwd, code })}</p>
        ) : null}
        <JsonView value={action.arguments} />
        <p>
          <Link href={`/approvals?focus=${encodeURIComponent(action.id)}`} className="btn btn-primary" data-testid="decide-in-inbox">
            {t("decideInInbox")}
          </Link>
        </p>
      </div>
    );
  }
  if (action.type === "question") {
    return (
      <div className="card callout" data-testid="required-action">
        <div className="approval-head">
          <strong>{t("answer")}</strong>
          <Countdown iso={action.expiresAt} />
        </div>
        <p className="small muted">{t("asked", { n: action.questions.length })}</p>
        <p>
          <Link href={`/answer/${action.id}`} className="btn btn-primary">
            {t("openAnswer")}
          </Link>
        </p>
      </div>
    );
  }
  return (
    <div className="card callout" data-testid="required-action">
      <div className="approval-head">
        <strong>{t.rich("clientTool", { name: action.name, code })}</strong>
        <Countdown iso={action.expiresAt} />
      </div>
      <p className="small muted">
        {t("clientRuns")}
        {action.privateInput ? t("privateInput") : ""}
      </p>
      <div className="label">{t("arguments")}</div>
      <JsonView value={action.arguments} />
      <div className="client-path" data-testid="client-tool-path">
        <div className="label">{t("clientMust")}</div>
        <ol className="small">
          <li>{t.rich("run", { name: action.name, code })}</li>
          <li>
            {t("submitBefore")}
            <time dateTime={action.expiresAt}>{formatTimestamp(action.expiresAt)}</time>
            {t.rich("withBody", { id: action.id, code })}
            <code>{'{"output": …}'}</code>
            {action.inputSchema ? t("matching") : ""}
            {t.rich("onLive", { id: action.id, code })}
          </li>
          <li>{t("afterExpiry")}</li>
        </ol>
        {action.inputSchema ? <JsonView value={action.inputSchema} label={t("outputSchema")} collapsed /> : null}
      </div>
    </div>
  );
}
