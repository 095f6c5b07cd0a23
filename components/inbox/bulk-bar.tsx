import { useTranslations } from "next-intl";
import { useErrorSentence } from "../use-error-sentence";

type TProps = {
  count: number;
  pending: boolean;
  error: unknown;
  onDecide: (decision: "approve" | "deny") => void;
  onClear: () => void;
};

/** Approve or deny every bulk-selected request at once (never high risk). */
export function BulkBar({ count, pending, error, onDecide, onClear }: TProps) {
  const t = useTranslations("inbox.bulk");
  const errorSentence = useErrorSentence();
  return (
    <section className="bulk-bar" aria-label={t("label")} data-testid="bulk-bar">
      <strong>{t("selected", { n: count })}</strong>
      <button type="button" className="btn btn-approve btn-small" disabled={pending} onClick={() => onDecide("approve")}>
        {t("approve")}
      </button>
      <button type="button" className="btn btn-deny btn-small" disabled={pending} onClick={() => onDecide("deny")}>
        {t("deny")}
      </button>
      <button type="button" className="btn btn-quiet btn-small" onClick={onClear}>
        {t("clear")}
      </button>
      <span className="muted small">{t("neverHigh")}</span>
      {error ? (
        <span role="alert" className="error-text">
          {errorSentence(error, "decide")}
        </span>
      ) : null}
    </section>
  );
}
