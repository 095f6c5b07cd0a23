import { personLabel } from "../server/core/person";

/** A person as the console names them: `personLabel` (the display name with the email beside it). */
export { personLabel };

/**
 * A person who decided or acted, wherever the console shows one: the display name with the email
 * beside it (muted), so a display name can never pass for someone else's; the whole label is the
 * tooltip. Without an email (the system, an unknown id) the name stands alone; without either,
 * `fallback`.
 */
export function Person({ name, email, fallback = "—" }: { name: string | null | undefined; email: string | null | undefined; fallback?: string }) {
  const n = name?.trim() || null;
  const e = email?.trim() || null;
  if (!n && !e) return <>{fallback}</>;
  const label = personLabel({ name: n, email: e });
  return (
    <span className="person" title={label} data-testid="person">
      {n && e && label !== e ? (
        <>
          {n} <span className="person-email">({e})</span>
        </>
      ) : (
        label
      )}
    </span>
  );
}

/** A person of a question record (requester, answerer) as the console names them; the id when nothing else is known. */
export const recordPerson = (p: { userId: string; name: string | null; email: string | null }): string => (p.name || p.email ? personLabel(p) : p.userId);
