import { LOCALES, type TLocale } from "../server/core/vocabulary";

export { LOCALES, type TLocale };

/** The language used when nothing the browser asks for is available. */
export const DEFAULT_LOCALE: TLocale = "en";

export const isLocale = (value: unknown): value is TLocale => typeof value === "string" && (LOCALES as readonly string[]).includes(value);

/** One language tag as we serve it: any Chinese that is not explicitly Traditional is zh-CN; any English is en. */
function served(tag: string): TLocale | null {
  const t = tag.trim().toLowerCase();
  if (t === "zh" || t === "zh-cn" || t === "zh-sg" || t.startsWith("zh-hans")) return "zh-CN";
  if (t === "en" || t.startsWith("en-")) return "en";
  return null;
}

/**
 * The best of our languages for an `Accept-Language` header (or `navigator.languages`), in the
 * browser's order of preference (q values), falling back to English.
 */
export function negotiateLocale(accepted: string | readonly string[] | null | undefined): TLocale {
  const entries = typeof accepted === "string" ? accepted.split(",") : (accepted ?? []);
  const ranked = entries
    .map((entry, order) => {
      const [tag = "", ...params] = entry.split(";");
      const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
      const weight = q ? Number(q.slice(2)) : 1;
      return { tag, weight: Number.isFinite(weight) ? weight : 0, order };
    })
    .filter((e) => e.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.order - b.order);
  for (const { tag } of ranked) {
    const locale = served(tag);
    if (locale) return locale;
  }
  return DEFAULT_LOCALE;
}

/** Each language's name in itself, for the language menu. */
export const LOCALE_NAMES: Record<TLocale, string> = { en: "English", "zh-CN": "简体中文" };
