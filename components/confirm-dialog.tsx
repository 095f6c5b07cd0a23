"use client";

import { useTranslations } from "next-intl";
import { type ReactNode, useEffect, useRef } from "react";

/**
 * A modal confirmation (native <dialog>: focus is trapped, Escape cancels). Focus starts on the
 * safe choice; the risky one must be chosen deliberately.
 */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  confirmClass = "btn-approve",
  onConfirm,
  onCancel,
  testId,
}: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  confirmClass?: string;
  onConfirm: () => void;
  onCancel: () => void;
  testId?: string;
}) {
  const t = useTranslations("dialog");
  const ref = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      dialog.showModal();
      cancelRef.current?.focus();
    } else if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby="confirm-title" onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }} data-testid={testId}>
      <h2 id="confirm-title">{title}</h2>
      <div className="dialog-body">{children}</div>
      <div className="actions">
        <button ref={cancelRef} type="button" className="btn btn-quiet" onClick={onCancel}>
          {t("cancel")}
        </button>
        <button type="button" className={`btn ${confirmClass}`} onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
