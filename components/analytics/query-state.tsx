"use client";

import { useSearchParams } from "next/navigation";
import type { MouseEvent, ReactNode } from "react";
import { useCallback, useMemo } from "react";
import { DECISION_OUTCOMES, type TDecisionOutcome } from "../../server/core/vocabulary";

/**
 * The analytics page's state is its URL's query string: the filters of the figures (period, agent,
 * action, approver, outcome) and the selection of the requests listed under them (a day, a repeated
 * request, a bucket of the time-to-decide histogram). A link to a figure is a real link; a reload or a shared address shows the same page.
 */

const PATH = "/analytics";
/** The periods offered, in days; the server answers at most 365 days at a time. */
export const PERIODS = ["7", "30", "90", "365"] as const;
export const MAX_PERIOD_DAYS = 365;

export type TAnalyticsParams = {
  days: string;
  agent: string;
  action: string;
  approver: string;
  outcome: TDecisionOutcome | "";
  /** The selected day (`YYYY-MM-DD` in the viewer's zone) of the requests listed. */
  day: string;
  /** The selected repeated request (its 32-hex key). */
  requestKey: string;
  /** The selected bucket of the time-to-decide histogram (its index). */
  waited: string;
};

const DEFAULTS: TAnalyticsParams = { days: "30", agent: "", action: "", approver: "", outcome: "", day: "", requestKey: "", waited: "" };
const KEYS = Object.keys(DEFAULTS) as Array<keyof TAnalyticsParams>;

export const isOutcome = (value: string): value is TDecisionOutcome => (DECISION_OUTCOMES as readonly string[]).includes(value);

/** The state a query string holds; a value the page would not offer is left out. */
export function paramsOf(search: { get: (name: string) => string | null }): TAnalyticsParams {
  const get = (name: keyof TAnalyticsParams) => search.get(name)?.trim() ?? "";
  const days = get("days");
  const outcome = get("outcome");
  return {
    days: (PERIODS as readonly string[]).includes(days) ? days : DEFAULTS.days,
    agent: get("agent"),
    action: get("action"),
    approver: get("approver"),
    outcome: isOutcome(outcome) ? outcome : "",
    day: /^\d{4}-\d{2}-\d{2}$/.test(get("day")) ? get("day") : "",
    requestKey: /^[0-9a-f]{32}$/.test(get("requestKey")) ? get("requestKey") : "",
    waited: /^\d{1,2}$/.test(get("waited")) ? get("waited") : "",
  };
}

/** The page's address with `change` applied to `params` (defaults left out). */
export function hrefOf(params: TAnalyticsParams, change: Partial<TAnalyticsParams>): string {
  const next = { ...params, ...change };
  const search = new URLSearchParams();
  for (const key of KEYS) if (next[key] !== "" && next[key] !== DEFAULTS[key]) search.set(key, next[key]);
  const query = search.toString();
  return query ? `${PATH}?${query}` : PATH;
}

/**
 * The page's state and how to change it. A change is a new history entry (Back returns to the
 * figures before it); Next's router follows `history.pushState`, so `useSearchParams` sees it
 * without a round trip to the server.
 */
export function useAnalyticsParams() {
  const search = useSearchParams();
  const params = useMemo(() => paramsOf(search), [search]);
  const href = useCallback((change: Partial<TAnalyticsParams>) => hrefOf(params, change), [params]);
  const go = useCallback((change: Partial<TAnalyticsParams>) => window.history.pushState(null, "", hrefOf(params, change)), [params]);
  return { params, href, go };
}

export type TAnalyticsNav = ReturnType<typeof useAnalyticsParams>;

/**
 * A link to another state of the page: a real link (opens in a new tab, can be copied), followed
 * in place by a plain click; `onFollow` runs after (to bring the requests listed into view).
 */
export function QueryLink({ href, onFollow, children, ...rest }: { href: string; onFollow?: () => void; children: ReactNode; className?: string; title?: string; "aria-current"?: "true"; "aria-label"?: string; "data-testid"?: string; "data-outcome"?: string }) {
  const follow = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    window.history.pushState(null, "", href);
    onFollow?.();
  };
  return (
    <a href={href} onClick={follow} {...rest}>
      {children}
    </a>
  );
}
