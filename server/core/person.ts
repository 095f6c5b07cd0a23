/**
 * How a person who decided or acted is named wherever people read it (console, trail, export,
 * Slack, email): the display name with the email beside it, so a display name alone can never
 * pass for someone else. Without an email (a deleted user, the system) the name stands alone.
 */
export function personLabel(person: { name: string | null | undefined; email: string | null | undefined }): string {
  const name = person.name?.trim() || null;
  const email = person.email?.trim() || null;
  if (name && email) return name.toLowerCase() === email.toLowerCase() ? email : `${name} (${email})`;
  return name ?? email ?? "someone";
}
