"use client";

import { useTranslations } from "next-intl";

type TProps = {
  /** True once the first click asked; the row then shows the confirming button and Keep. */
  asking: boolean;
  onAsk: () => void;
  onCancel: () => void;
  onConfirm: () => void;
  label: string;
  confirmLabel: string;
  /** The first button's look (e.g. `btn btn-outline-bad btn-small`). */
  askClassName: string;
  busy?: boolean;
  ariaLabel?: string;
  testId?: string;
};

/** A destructive row action in two clicks: the first asks, the second does it, Keep backs out. */
export function TwoStepAction({ asking, onAsk, onCancel, onConfirm, label, confirmLabel, askClassName, busy = false, ariaLabel, testId }: TProps) {
  const t = useTranslations("list");
  if (!asking) {
    return (
      <button type="button" className={askClassName} onClick={onAsk} aria-label={ariaLabel} data-testid={testId}>
        {label}
      </button>
    );
  }
  return (
    <span className="actions">
      <button type="button" className="btn btn-deny btn-small" onClick={onConfirm} disabled={busy}>
        {confirmLabel}
      </button>
      <button type="button" className="btn btn-quiet btn-small" onClick={onCancel}>
        {t("keep")}
      </button>
    </span>
  );
}
