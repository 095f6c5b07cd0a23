/**
 * Views of untrusted text in which obfuscated reviewer-directed instructions become plain:
 * compatibility forms, invisible characters, homoglyphs, escapes, base64 and spaced-out letters.
 */

/** A normalized view of the text and how it was derived (for evidence). */
export type TTextView = { via: string; text: string };

/** Only this much of each text is scanned: the head and the tail, where instructions usually sit. */
const MAX_SCAN = 64 * 1024;
const MAX_BASE64_TOKENS = 32;

// Zero-width, joiner, bidi-control, soft-hyphen and filler characters: invisible, so a shell
// command or a reviewer prompt never needs them, but they split words a filter looks for.
const INVISIBLE = /\p{Cf}|\p{Variation_Selector}|[\u115F\u1160\u3164\uFFA0]|\u034F|\u17B4|\u17B5/gu;
// Unicode tag characters mirror ASCII invisibly ("ASCII smuggling"); reveal what they spell.
const TAG_CHARS = /[\u{E0000}-\u{E007F}]/gu;

const HOMOGLYPHS: Record<string, string> = {
  а: "a", в: "b", е: "e", ё: "e", к: "k", м: "m", н: "h", о: "o", р: "p", с: "c", т: "t", у: "y", х: "x",
  і: "i", ї: "i", ј: "j", ѕ: "s", ԁ: "d", һ: "h", ӏ: "l", ԛ: "q", ԝ: "w", ɡ: "g", ɑ: "a", ı: "i",
  α: "a", β: "b", ε: "e", η: "n", ι: "i", κ: "k", ν: "v", ο: "o", ρ: "p", τ: "t", υ: "u", χ: "x", γ: "y",
};
const HOMOGLYPH_CHARS = new RegExp(`[${Object.keys(HOMOGLYPHS).join("")}]`, "g");
const LEET: Record<string, string> = { "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", $: "s" };

function bounded(text: string): string {
  return text.length <= MAX_SCAN * 2 ? text : `${text.slice(0, MAX_SCAN)}\n${text.slice(-MAX_SCAN)}`;
}

function revealTags(text: string): string {
  return text.replace(TAG_CHARS, (ch) => {
    const ascii = (ch.codePointAt(0) ?? 0) - 0xe0000;
    return ascii >= 0x20 && ascii < 0x7f ? String.fromCharCode(ascii) : "";
  });
}

/** NFKC, revealed tag characters, no invisible characters, lower case, Latin look-alikes, single spaces. */
export function normalizeForScan(text: string): string {
  return revealTags(text.normalize("NFKC"))
    .replace(INVISIBLE, "")
    .toLowerCase()
    .replace(HOMOGLYPH_CHARS, (ch) => HOMOGLYPHS[ch] ?? ch)
    .replace(/[ \t\f\v\u00A0]+/g, " ");
}

/** Decodes `\xHH`, `\uHHHH`, `\u{H…}`, `%HH` and HTML numeric entities. */
function decodeEscapes(text: string): string {
  const fromCode = (code: number) => (code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "");
  return text
    .replace(/\\u\{([0-9a-f]{1,6})\}|\\u([0-9a-f]{4})|\\x([0-9a-f]{2})/gi, (_, a, b, c) => fromCode(Number.parseInt(a ?? b ?? c, 16)))
    .replace(/%([0-9a-f]{2})/gi, (_, h) => fromCode(Number.parseInt(h, 16)))
    .replace(/&#x([0-9a-f]{1,6});|&#([0-9]{1,7});/gi, (_, h, d) => fromCode(h ? Number.parseInt(h, 16) : Number.parseInt(d, 10)));
}

/** Base64 (standard or URL-safe) runs that decode to mostly printable text. */
export function decodeEmbeddedBase64(text: string): string[] {
  const decoded: string[] = [];
  const tokens = text.match(/[A-Za-z0-9+/_-]{16,}={0,2}/g) ?? [];
  for (const token of tokens.slice(0, MAX_BASE64_TOKENS)) {
    const plain = Buffer.from(token.replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("utf8");
    const printable = plain.replace(/[^\x20-\x7e\n\t\u00a0-\uffff]/g, "").length;
    if (plain.length >= 8 && printable / plain.length > 0.95 && /[a-z]{3}/i.test(plain)) decoded.push(plain);
  }
  return decoded;
}

/**
 * The views that ordinary patterns run on: the normalized text, its escape-decoded form and
 * the printable contents of embedded base64 (one level deep).
 */
export function textViews(raw: string): TTextView[] {
  const text = bounded(raw);
  const base = normalizeForScan(text);
  const views: TTextView[] = [{ via: "text", text: base }];
  const unescaped = normalizeForScan(decodeEscapes(text));
  if (unescaped !== base) views.push({ via: "escape-decoded", text: unescaped });
  for (const plain of decodeEmbeddedBase64(revealTags(text.normalize("NFKC")).replace(INVISIBLE, ""))) {
    views.push({ via: "base64-decoded", text: normalizeForScan(plain) });
  }
  return views;
}

/**
 * Letters and digits only, with leetspeak undone: `i-g n.o r e  pr3v10us` becomes `ignoreprevious`.
 * Only a short list of squashed phrases is matched against it, because word boundaries are gone.
 */
export function squashedView(normalized: string): string {
  return normalized.replace(/[013457@$]/g, (ch) => LEET[ch] ?? ch).replace(/[^a-z0-9]/g, "");
}
