"use client";

import { useTranslations } from "next-intl";
import { type ReactNode, useId, useState } from "react";

/**
 * A chart's figures as a table on demand: the button says whether it is shown, the table holds
 * the same numbers (and links) as the chart, for a keyboard or a screen reader.
 */
export function ChartTable({ children, testId }: { children: ReactNode; testId?: string }) {
  const t = useTranslations("analytics");
  const [open, setOpen] = useState(false);
  const id = useId();
  return (
    <div className="analytics-chart-table">
      <button type="button" className="btn btn-quiet btn-small" aria-expanded={open} aria-controls={id} onClick={() => setOpen((o) => !o)} data-testid={testId}>
        {open ? t("hideTable") : t("showTable")}
      </button>
      <div id={id} hidden={!open}>
        {open ? children : null}
      </div>
    </div>
  );
}
