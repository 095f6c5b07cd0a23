import { useTranslations } from "next-intl";

/*
 * Class names are spelled out whole, one per value, so scripts/css-selectors.test.ts finds each
 * class a stylesheet selects in the source (a class built as `risk-${risk}` cannot be found).
 */

/** A risk's badge colour. */
export const RISK_CLASS: Record<string, string> = { low: "risk-low", medium: "risk-medium", high: "risk-high" };

/** A risk's coloured left edge on an approval card or an inbox row. */
export const RISK_EDGE_CLASS: Record<string, string> = { low: "risk-edge-low", medium: "risk-edge-medium", high: "risk-edge-high" };

/** Colored risk badge (low / medium / high); the text carries the meaning, not only the color. */
export function RiskBadge({ risk }: { risk: string }) {
  const t = useTranslations("risk");
  return <span className={`badge ${RISK_CLASS[risk] ?? ""}`}>{t.has(risk as "low") ? t(risk as "low") : risk}</span>;
}

/** A status's badge tone class. */
const STATUS_TONE: Record<string, string> = {
  completed: "tone-ok",
  approved: "tone-ok",
  active: "tone-ok",
  revoked: "tone-bad",
  answered: "tone-ok",
  in_progress: "tone-info",
  requires_action: "tone-warn",
  pending: "tone-warn",
  denied: "tone-bad",
  failed: "tone-bad",
  expired: "tone-muted",
  cancelled: "tone-muted",
};

/** Status badge for responses and approvals; `data-status` carries the raw value. */
export function StatusBadge({ status }: { status: string }) {
  const t = useTranslations("status");
  return (
    <span className={`badge ${STATUS_TONE[status] ?? "tone-muted"}`} data-testid="status" data-status={status}>
      {t.has(status as "pending") ? t(status as "pending") : status.replace("_", " ")}
    </span>
  );
}
