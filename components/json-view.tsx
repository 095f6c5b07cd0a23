/** Pretty-printed JSON; strings are shown as-is. */
export function toPrettyJson(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A JSON block, optionally collapsed behind a disclosure. */
export function JsonView({ value, label, collapsed = false }: { value: unknown; label?: string; collapsed?: boolean }) {
  const block = <pre className="code">{toPrettyJson(value)}</pre>;
  if (!collapsed) return block;
  return (
    <details className="json-details">
      <summary>{label ?? "data"}</summary>
      {block}
    </details>
  );
}
