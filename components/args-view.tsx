"use client";

import { useState } from "react";

const LIMIT = 160;

/** Replaces long strings by their start (with the full length noted); `cut.any` tells whether any was cut. */
function shorten(value: unknown, cut: { any: boolean }): unknown {
  if (typeof value === "string") {
    if (value.length <= LIMIT) return value;
    cut.any = true;
    return `${value.slice(0, LIMIT)}… (${value.length} characters)`;
  }
  if (Array.isArray(value)) return value.map((v) => shorten(v, cut));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shorten(v, cut)]));
  return value;
}

const pretty = (value: unknown): string => {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
};

/**
 * Tool arguments pretty-printed as JSON (one block), with long values collapsed to their first
 * characters until "Show full values" is pressed.
 */
export function ArgsView({ value }: { value: unknown }) {
  const [full, setFull] = useState(false);
  const cut = { any: false };
  const short = shorten(value, cut);
  return (
    <div className="args-view">
      <pre className="code" data-testid="arguments">
        {pretty(full ? value : short)}
      </pre>
      {cut.any ? (
        <button type="button" className="btn btn-quiet btn-small" aria-expanded={full} onClick={() => setFull(!full)}>
          {full ? "Collapse long values" : "Show full values"}
        </button>
      ) : null}
    </div>
  );
}
