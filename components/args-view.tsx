"use client";

import { useTranslations } from "next-intl";
import { Fragment, type ReactNode, useState } from "react";

/** Strings longer than this show their beginning and end with the length; the middle on demand. */
const LONG = 400;
const HEAD = 240;
const TAIL = 120;

/** Every string value longer than LONG in `value`, in order (the same string once). */
export function longStrings(value: unknown, found: string[] = []): string[] {
  if (typeof value === "string") {
    if (value.length > LONG && !found.includes(value)) found.push(value);
  } else if (Array.isArray(value)) for (const v of value) longStrings(v, found);
  else if (value && typeof value === "object") for (const v of Object.values(value)) longStrings(v, found);
  return found;
}

/** How long values are named: "5,000 characters", "(…, shown in full below)". */
export type TArgsWords = { characters: (n: number) => string; shownBelow: (length: string) => string };

const ENGLISH: TArgsWords = {
  characters: (n) => `${n.toLocaleString("en-US")} character${n === 1 ? "" : "s"}`,
  shownBelow: (length) => `(${length}, shown in full below)`,
};

/** TArgsWords in the page's language. */
export function useArgsWords(): TArgsWords {
  const t = useTranslations("args");
  return { characters: (n) => t("characters", { n }), shownBelow: (length) => t("shownBelow", { length }) };
}

/**
 * The request's own sentence with every long argument value it repeats replaced by its beginning
 * and end: the value is shown once, in full on demand, in the arguments below.
 */
export function abbreviateIn(message: string, args: unknown, words: TArgsWords = ENGLISH): string {
  let text = message;
  for (const s of longStrings(args)) {
    if (text.includes(s)) text = text.split(s).join(`${s.slice(0, 60)}…${s.slice(-40)} ${words.shownBelow(words.characters(s.length))}`);
  }
  return text;
}

/** JSON's escaping of a string's characters, without the quotes. */
const escaped = (s: string): string => JSON.stringify(s).slice(1, -1);

/** One long string value: its beginning, the hidden middle as a button, its end, and its length. */
function LongValue({ value, full, onExpand }: { value: string; full: boolean; onExpand: () => void }) {
  const t = useTranslations("args");
  const words = useArgsWords();
  return (
    <span className="long-value" data-testid="long-value" data-length={value.length}>
      {full ? (
        `"${escaped(value)}"`
      ) : (
        <>
          {`"${escaped(value.slice(0, HEAD))}`}
          <button type="button" className="long-gap" onClick={onExpand} data-testid="show-middle">
            {t("notShown", { length: words.characters(value.length - HEAD - TAIL) })}
          </button>
          {`${escaped(value.slice(-TAIL))}"`}
        </>
      )}
      <span className="long-length"> ({words.characters(value.length)})</span>
    </span>
  );
}

const pretty = (value: unknown, replacer?: (key: string, v: unknown) => unknown): string => {
  if (typeof value === "string" && !replacer) return value;
  try {
    return JSON.stringify(value, replacer, 2) ?? String(value);
  } catch {
    return String(value);
  }
};

/**
 * Tool arguments pretty-printed as JSON, in monospace, each value once. A long string shows its
 * length and its beginning and end, so what is approved is visible without scrolling through it;
 * the whole of it is one click away.
 */
export function ArgsView({ value }: { value: unknown }) {
  const t = useTranslations("args");
  const [full, setFull] = useState(false);
  const long = longStrings(value);
  const expand = () => setFull(true);
  let content: ReactNode;
  if (long.length === 0) content = pretty(value);
  else if (typeof value === "string") content = <LongValue value={value} full={full} onExpand={expand} />;
  else {
    // Long strings become markers in the JSON text, then their own element where each marker was.
    const nonce = Math.random().toString(36).slice(2);
    const text = pretty(value, (_key, v) => (typeof v === "string" && long.includes(v) ? `@@long:${long.indexOf(v)}:${nonce}@@` : v));
    content = text.split(new RegExp(`"@@long:(\\d+):${nonce}@@"`)).map((part, i) =>
      // biome-ignore lint/suspicious/noArrayIndexKey: a fixed rendering of one value
      i % 2 === 0 ? <Fragment key={i}>{part}</Fragment> : <LongValue key={i} value={long[Number(part)] as string} full={full} onExpand={expand} />,
    );
  }
  return (
    <div className="args-view">
      <pre className="code" data-testid="arguments">
        {content}
      </pre>
      {full ? (
        <button type="button" className="btn btn-quiet btn-small" aria-expanded={true} onClick={() => setFull(false)}>
          {t("showEnds")}
        </button>
      ) : null}
    </div>
  );
}
