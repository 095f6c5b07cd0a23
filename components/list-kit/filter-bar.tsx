import { useTranslations } from "next-intl";
import type { ReactNode } from "react";

/** The row of filters above a list (the filters themselves are in `../filters`). */
export function FilterBar({ children, testId, label }: { children: ReactNode; testId?: string; label?: string }) {
  const t = useTranslations("list");
  return (
    <fieldset className="filter-bar" aria-label={label ?? t("filters")} data-testid={testId}>
      {children}
    </fieldset>
  );
}
