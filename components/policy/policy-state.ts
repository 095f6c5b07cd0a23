"use client";

import { useSearchParams } from "next/navigation";
import { useCallback, useMemo } from "react";

/**
 * The Policy page's address holds the suggestions' window (`/policy?days=30`): a reload or a shared
 * link shows the same suggestions, and the window an admin applies or dismisses one for is the one
 * it was listed for (a dismissal holds for windows of that length).
 */

const PATH = "/policy";
/** The windows offered, in days (the server reads at most 365). */
export const WINDOWS = ["7", "14", "30", "90"] as const;
export type TWindow = (typeof WINDOWS)[number];
/** The server's default window (DEFAULT_SUGGESTION_DAYS). */
export const DEFAULT_WINDOW: TWindow = "14";

const isWindow = (value: string): value is TWindow => (WINDOWS as readonly string[]).includes(value);

/** The window a query string holds; one the page does not offer is the default. */
export function windowOf(search: { get: (name: string) => string | null }): TWindow {
  const days = search.get("days")?.trim() ?? "";
  return isWindow(days) ? days : DEFAULT_WINDOW;
}

/** The page's address for a window (the default left out). */
export const policyHref = (days: TWindow): string => (days === DEFAULT_WINDOW ? PATH : `${PATH}?days=${days}`);

/** The window and how to change it: a new history entry (Back returns to the one before). */
export function usePolicyWindow() {
  const search = useSearchParams();
  const days = useMemo(() => windowOf(search), [search]);
  const go = useCallback((next: TWindow) => window.history.pushState(null, "", policyHref(next)), []);
  return { days, go };
}

/** What the simulation form holds, checked in the browser before anything is sent. */
export type TCandidate = { ok: true; file: Record<string, unknown> } | { ok: false; problem: "empty" | "notObject" } | { ok: false; problem: "json"; detail: string };

/** The candidate agents file from the text pasted or read from a file: JSON, and an object. */
export function parseCandidate(text: string): TCandidate {
  if (text.trim() === "") return { ok: false, problem: "empty" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: "json", detail: error instanceof Error ? error.message : String(error) };
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return { ok: false, problem: "notObject" };
  return { ok: true, file: value as Record<string, unknown> };
}

/** The simulation's window as typed: a whole number of days from 1 to 365, else null. */
export function windowDays(text: string): number | null {
  if (!/^\s*\d{1,3}\s*$/.test(text)) return null;
  const n = Number(text);
  return n >= 1 && n <= 365 ? n : null;
}
