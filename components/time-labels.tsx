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

type TDurationTranslator = ReturnType<typeof useTranslations<"duration">>;

/** "850 ms", "4.2 s", "1 min 23 s", "2 h 05 min", "3 d 4 h" (in the page's language with `t`). */
export function humanDuration(ms: number, t?: TDurationTranslator): string {
  const say = (key: "ms" | "s" | "minS" | "hMin" | "dH", v: Record<string, string | number>, english: string) => (t ? t(key, v) : english);
  if (ms < 1000) {
    const n = Math.max(0, Math.round(ms));
    return say("ms", { n }, `${n} ms`);
  }
  if (ms < 10_000) {
    const n = (ms / 1000).toFixed(1);
    return say("s", { n }, `${n} s`);
  }
  const s = Math.round(ms / 1000);
  if (s < 60) return say("s", { n: s }, `${s} s`);
  if (s < 3600) return say("minS", { m: Math.floor(s / 60), s: s % 60 }, `${Math.floor(s / 60)} min ${s % 60} s`);
  if (s < 86_400) {
    const h = Math.floor(s / 3600);
    const m = String(Math.floor((s % 3600) / 60)).padStart(2, "0");
    return say("hMin", { h, m }, `${h} h ${m} min`);
  }
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  return say("dH", { d, h }, `${d} d ${h} h`);
}

/** humanDuration in the page's language. */
export function useHumanDuration(): (ms: number) => string {
  const t = useTranslations("duration");
  return (ms) => humanDuration(ms, t);
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
