/**
 * The viewer's calendar: their time zone (the browser's) and periods of whole local days, as the
 * day-based pages (usage, analytics) ask the server for them.
 */

/** The viewer's IANA time zone (the browser's), which day-based figures follow. */
export const viewerZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** `YYYY-MM-DD` of a local calendar date. */
export const localDay = (d: Date): string => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;

/**
 * The last `days` local calendar days, ending at the viewer's next local midnight so today is
 * included whole, as ISO instants. A daylight-saving change makes calendar days 23 or 25 hours
 * long: with `maxDays`, the start moves up to `maxDays` × 24 hours before the end (a server bound).
 */
export function periodEndingTonight(days: number, maxDays?: number): { from: string; to: string } {
  const end = new Date();
  end.setHours(24, 0, 0, 0);
  const start = new Date(end);
  start.setDate(start.getDate() - days);
  const earliest = maxDays === undefined ? start.getTime() : end.getTime() - maxDays * 86_400_000;
  return { from: new Date(Math.max(start.getTime(), earliest)).toISOString(), to: end.toISOString() };
}
