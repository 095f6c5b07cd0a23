import type { ReactNode } from "react";

/** The row of filters above a list (the filters themselves are in `../filters`). */
export function FilterBar({ children, testId, label = "Filters" }: { children: ReactNode; testId?: string; label?: string }) {
  return (
    <fieldset className="filter-bar" aria-label={label} data-testid={testId}>
      {children}
    </fieldset>
  );
}
