import { useTranslations } from "next-intl";

/** Colored risk badge (low / medium / high); the text carries the meaning, not only the color. */
export function RiskBadge({ risk }: { risk: string }) {
  const t = useTranslations("risk");
  return <span className={`badge risk-${risk}`}>{t.has(risk as "low") ? t(risk as "low") : risk}</span>;
}

const STATUS_TONE: Record<string, string> = {
  completed: "ok",
  approved: "ok",
  active: "ok",
  revoked: "bad",
  answered: "ok",
  in_progress: "info",
  requires_action: "warn",
  pending: "warn",
  denied: "bad",
  failed: "bad",
  expired: "muted",
  cancelled: "muted",
};

/** Status badge for responses and approvals; `data-status` carries the raw value. */
export function StatusBadge({ status }: { status: string }) {
  const t = useTranslations("status");
  return (
    <span className={`badge tone-${STATUS_TONE[status] ?? "muted"}`} data-testid="status" data-status={status}>
      {t.has(status as "pending") ? t(status as "pending") : status.replace("_", " ")}
    </span>
  );
}
