const RISK_LABEL: Record<string, string> = { low: "Low risk", medium: "Medium risk", high: "High risk" };

/** Colored risk badge (low / medium / high); the text carries the meaning, not only the color. */
export function RiskBadge({ risk }: { risk: string }) {
  return <span className={`badge risk-${risk}`}>{RISK_LABEL[risk] ?? risk}</span>;
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
  return (
    <span className={`badge tone-${STATUS_TONE[status] ?? "muted"}`} data-testid="status" data-status={status}>
      {status.replace("_", " ")}
    </span>
  );
}
