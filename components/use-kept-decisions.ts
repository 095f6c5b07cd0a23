"use client";

import { skipToken, useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { TApprovalRow, TInboxRow } from "./api-types";
import type { TKept, TLostCard, TMineNote } from "./decision-outcome";
import { useTRPC } from "./trpc-provider";

/** Own notes kept at once: enough to see the last few outcomes, few enough not to bury the queue. */
const MAX_NOTES = 3;

/**
 * Keeps decided cards in the inbox instead of letting them vanish: this page's own decisions
 * leave a note naming the outcome; a card someone else settled (the live feed took it away, or
 * our decision came back 409) stays and says who decided what, when and how. A lost race is
 * never silent. `listKey` names the filters: a new filter starts a new list, not departures.
 */
export function useKeptDecisions(rows: TInboxRow[] | undefined, listKey: string) {
  const trpc = useTRPC();
  const [kept, setKept] = useState<Map<string, TKept>>(() => new Map());
  // Approvals this page is deciding or decided: their leaving the list is not someone else's doing.
  const ours = useRef(new Set<string>());
  const previous = useRef<{ key: string; rows: Map<string, TInboxRow> } | null>(null);

  useEffect(() => {
    if (!rows) return;
    const before = previous.current;
    previous.current = { key: listKey, rows: new Map(rows.map((r) => [r.id, r])) };
    if (!before || before.key !== listKey) {
      if (before) setKept(new Map());
      return;
    }
    const present = new Set(rows.map((r) => r.id));
    const gone = [...before.rows.values()].filter((r) => !present.has(r.id) && !ours.current.has(r.id));
    setKept((current) => {
      const next = new Map(current);
      // A card that is pending again (a 409 that was not a settlement) is shown as itself.
      for (const [id, entry] of current) if (entry.kind === "lost" && present.has(id)) next.delete(id);
      for (const r of gone) if (!next.has(r.id)) next.set(r.id, { kind: "lost", row: r, tried: null });
      return next.size === current.size && gone.length === 0 ? current : next;
    });
  }, [rows, listKey]);

  const lostIds = useMemo(() => [...kept.values()].filter((k) => k.kind === "lost").map((k) => k.row.id).slice(-50), [kept]);
  const outcomes = useQuery(trpc.approvals.list.queryOptions(lostIds.length > 0 ? { status: "decided", ids: lostIds } : skipToken));
  const outcomeOf = useMemo(() => new Map<string, TApprovalRow>((outcomes.data ?? []).map((o) => [o.id, o])), [outcomes.data]);

  /** This page starts deciding `id`. */
  const claim = useCallback((id: string) => ours.current.add(id), []);
  /** This page's decision failed without settling anything: a later departure is someone else's. */
  const release = useCallback((id: string) => ours.current.delete(id), []);
  const keepMine = useCallback((row: TInboxRow, text: string) => {
    setKept((current) => {
      const next = new Map(current);
      next.delete(row.id);
      next.set(row.id, { kind: "mine", row, text } satisfies TMineNote);
      const notes = [...next.values()].filter((k) => k.kind === "mine");
      for (const old of notes.slice(0, Math.max(0, notes.length - MAX_NOTES))) next.delete(old.row.id);
      return next;
    });
  }, []);
  const keepLost = useCallback((row: TInboxRow, tried: TLostCard["tried"]) => {
    setKept((current) => new Map(current).set(row.id, { kind: "lost", row, tried }));
  }, []);
  const dismiss = useCallback((id: string) => {
    setKept((current) => {
      const next = new Map(current);
      next.delete(id);
      return next;
    });
  }, []);

  return { kept: [...kept.values()], outcomeOf, claim, release, keepMine, keepLost, dismiss };
}
