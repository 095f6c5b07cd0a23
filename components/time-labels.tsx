"use client";

import { useNow } from "./use-now";

/** "1h 02m", "4m 09s", "12s" */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, "0")}m`;
  if (m > 0) return `${m}m ${String(s).padStart(2, "0")}s`;
  return `${s}s`;
}

function ago(ms: number): string {
  if (ms < 5_000) return "just now";
  if (ms < 60_000) return `${Math.round(ms / 1000)}s ago`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min ago`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)} h ago`;
  return `${Math.round(ms / 86_400_000)} d ago`;
}

export const formatTimestamp = (iso: string): string =>
  new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });

/** Relative past time ("3 min ago") with the exact time on hover and for assistive tech. */
export function TimeAgo({ iso }: { iso: string }) {
  const now = useNow(15_000);
  return (
    <time dateTime={iso} title={formatTimestamp(iso)}>
      {ago(now - new Date(iso).getTime())}
    </time>
  );
}

/** Live countdown to an expiry; turns urgent in the last minute. */
export function Countdown({ iso }: { iso: string }) {
  const now = useNow(1000);
  const left = new Date(iso).getTime() - now;
  const label = left <= 0 ? "expired" : `expires in ${formatDuration(left)}`;
  const tone = left <= 0 ? "expired" : left < 60_000 ? "urgent" : "";
  return (
    <time dateTime={iso} title={`Expires ${formatTimestamp(iso)}`} className={`countdown ${tone}`} data-testid="expiry">
      {label}
    </time>
  );
}
