"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import type { TInboxRow } from "../api-types";

/**
 * The selected pending request: from `?focus=<approvalId>` (a link from Home or a response),
 * kept valid as items come and go (the same item, else the one now at its place), scrolled into
 * view in the list when chosen.
 */
export function useInboxSelection(rows: TInboxRow[]) {
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const lastIndex = useRef(0);
  const rowEls = useRef(new Map<string, HTMLElement>());
  const detail = useRef<HTMLElement>(null);
  const focusFromLink = useRef<string | null>(null);

  useEffect(() => {
    const focus = new URLSearchParams(window.location.search).get("focus");
    if (focus) {
      focusFromLink.current = focus;
      setSelectedId(focus);
    }
  }, []);

  useEffect(() => {
    if (rows.length === 0) return;
    const index = selectedId ? rows.findIndex((r) => r.id === selectedId) : -1;
    if (index >= 0) {
      lastIndex.current = index;
      if (selectedId && focusFromLink.current === selectedId) {
        focusFromLink.current = null;
        rowEls.current.get(selectedId)?.scrollIntoView({ block: "nearest" });
        detail.current?.focus({ preventScroll: true });
      }
    } else setSelectedId(rows[Math.min(lastIndex.current, rows.length - 1)]?.id ?? null);
  }, [rows, selectedId]);

  const select = useCallback((id: string | null) => {
    setSelectedId(id);
    if (id) rowEls.current.get(id)?.scrollIntoView({ block: "nearest" });
  }, []);

  /** Registers a line's element (for scrolling it into view), as a ref callback. */
  const rowRef = useCallback(
    (id: string) => (el: HTMLElement | null) => {
      if (el) rowEls.current.set(id, el);
      else rowEls.current.delete(id);
    },
    [],
  );

  const index = selectedId ? rows.findIndex((r) => r.id === selectedId) : -1;
  return { selectedId, selected: index >= 0 ? rows[index] : undefined, index, select, rowRef, detail };
}
