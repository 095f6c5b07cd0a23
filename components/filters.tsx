"use client";

import { useTranslations } from "next-intl";
import { type ReactNode, useEffect, useId, useState } from "react";

/** The value after it stopped changing for `ms` (search boxes query the server as you type). */
export function useDebounced<T>(value: T, ms = 300): T {
  const [current, setCurrent] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setCurrent(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return current;
}

/** A labelled select of a filter bar; the empty value means "any". */
export function SelectFilter({
  label,
  value,
  onChange,
  options,
  anyLabel,
  testId,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  options: ReadonlyArray<{ value: string; label: string }>;
  anyLabel?: string | null;
  testId?: string;
}) {
  const id = useId();
  const t = useTranslations("list");
  return (
    <div className="filter">
      <label htmlFor={id}>{label}</label>
      <select id={id} className="input input-compact" value={value} onChange={(e) => onChange(e.target.value)} data-testid={testId}>
        {anyLabel !== null ? <option value="">{anyLabel ?? t("any")}</option> : null}
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Toggle buttons for a multi-valued filter (none pressed: any). */
export function ToggleGroup<T extends string>({
  label,
  values,
  selected,
  onChange,
  labelOf = (v) => v,
  testId,
}: {
  label: string;
  values: readonly T[];
  selected: readonly T[];
  onChange: (next: T[]) => void;
  labelOf?: (value: T) => string;
  testId?: string;
}) {
  return (
    <fieldset className="filter toggle-group" data-testid={testId}>
      <legend>{label}</legend>
      <div className="toggles">
        {values.map((v) => {
          const on = selected.includes(v);
          return (
            <button
              key={v}
              type="button"
              className={`toggle${on ? " on" : ""}`}
              aria-pressed={on}
              onClick={() => onChange(on ? selected.filter((x) => x !== v) : [...selected, v])}
            >
              {labelOf(v)}
            </button>
          );
        })}
      </div>
    </fieldset>
  );
}

/** A labelled text filter. */
export function TextFilter({ label, value, onChange, placeholder, testId, type = "search" }: { label: string; value: string; onChange: (value: string) => void; placeholder?: string; testId?: string; type?: "search" | "datetime-local" }) {
  const id = useId();
  return (
    <div className={`filter${type === "search" ? " filter-grow" : ""}`}>
      <label htmlFor={id}>{label}</label>
      <input id={id} className="input input-compact" type={type} value={value} placeholder={placeholder} onChange={(e) => onChange(e.target.value)} data-testid={testId} />
    </div>
  );
}

/** `datetime-local` value → ISO string (local time), or undefined when empty/invalid. */
export function localToIso(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** A keyboard key as shown in hints. */
export function Kbd({ children }: { children: ReactNode }) {
  return <kbd className="kbd">{children}</kbd>;
}
