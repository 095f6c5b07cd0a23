"use client";

import { useLocale, useTranslations } from "next-intl";
import { useNow } from "./use-now";

/** "1h 02m", "4m 09s", "12s" (compact, language-neutral; see useFormatDuration for the translated form). */
export function formatDuration(ms: number): string {
  const { h, m, s } = durationParts(ms);
  if (h > 0) return `${h}h ${m}m`;
  if (Number(m) > 0) return `${Number(m)}m ${s}s`;
  return `${Number(s)}s`;
}

function durationParts(ms: number): { h: number; m: string; s: string } {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  return { h, m: String(Math.floor((total % 3600) / 60)).padStart(2, "0"), s: String(total % 60).padStart(2, "0") };
}

/** formatDuration in the page's language ("1h 02m", "1 小时 02 分"). */
export function useFormatDuration(): (ms: number) => string {
  const t = useTranslations("time");
  return (ms) => {
    const { h, m, s } = durationParts(ms);
    if (h > 0) return t("hoursMinutes", { h, m });
    if (Number(m) > 0) return t("minutesSeconds", { m: Number(m), s });
    return t("seconds", { s: Number(s) });
  };
}

/** A date and time in `locale` (the browser's when left out), in the viewer's time zone. */
export const formatTimestamp = (iso: string, locale?: string): string =>
  new Date(iso).toLocaleString(locale, { dateStyle: "medium", timeStyle: "medium" });

/** formatTimestamp in the page's language. */
export function useFormatTimestamp(): (iso: string) => string {
  const locale = useLocale();
  return (iso) => formatTimestamp(iso, locale);
}

/** Relative past time ("3 min ago") with the exact time on hover and for assistive tech. */
export function TimeAgo({ iso }: { iso: string }) {
  const t = useTranslations("time");
  const stamp = useFormatTimestamp();
  const now = useNow(15_000);
  const ms = now - new Date(iso).getTime();
  const text =
    ms < 5_000
      ? t("justNow")
      : ms < 60_000
        ? t("secondsAgo", { n: Math.round(ms / 1000) })
        : ms < 3_600_000
          ? t("minutesAgo", { n: Math.round(ms / 60_000) })
          : ms < 86_400_000
            ? t("hoursAgo", { n: Math.round(ms / 3_600_000) })
            : t("daysAgo", { n: Math.round(ms / 86_400_000) });
  return (
    <time dateTime={iso} title={stamp(iso)}>
      {text}
    </time>
  );
}

/** Live countdown to an expiry; turns urgent in the last minute. */
export function Countdown({ iso }: { iso: string }) {
  const t = useTranslations("time");
  const duration = useFormatDuration();
  const stamp = useFormatTimestamp();
  const now = useNow(1000);
  const left = new Date(iso).getTime() - now;
  const label = left <= 0 ? t("expired") : t("expiresIn", { duration: duration(left) });
  const tone = left <= 0 ? "expired" : left < 60_000 ? "urgent" : "";
  return (
    <time dateTime={iso} title={t("expiresAt", { when: stamp(iso) })} className={`countdown ${tone}`} data-testid="expiry">
      {label}
    </time>
  );
}
