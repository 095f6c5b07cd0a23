"use client";

import { useEffect, useRef } from "react";

/** Keys typed into a form control are text, not shortcuts. */
const isTyping = (target: EventTarget | null): boolean => {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
};

/** What each inbox shortcut does; the hook reads the latest handlers on every key press. */
export type TInboxKeyHandlers = {
  /** False while a dialog is open: its own keys apply. */
  active: () => boolean;
  move: (step: 1 | -1) => void;
  approve: () => void;
  deny: () => void;
  edit: () => void;
  reply: () => void;
  grant: () => void;
  toggleBulk: () => void;
  open: () => void;
  toggleHelp: () => void;
  escape: () => void;
};

const KEYS: Record<string, (h: TInboxKeyHandlers) => void> = {
  j: (h) => h.move(1),
  k: (h) => h.move(-1),
  a: (h) => h.approve(),
  d: (h) => h.deny(),
  e: (h) => h.edit(),
  r: (h) => h.reply(),
  g: (h) => h.grant(),
  x: (h) => h.toggleBulk(),
  o: (h) => h.open(),
  "?": (h) => h.toggleHelp(),
};

/**
 * The inbox's keyboard: j/k move, a/d decide, e/r/g open a focused field (edit, reply instead,
 * standing grant), x bulk-selects, o opens the response, ? shows help, Esc clears. Keys typed
 * into a field are text, and nothing fires while a dialog is open.
 */
export function useInboxKeys(handlers: TInboxKeyHandlers): void {
  const current = useRef(handlers);
  current.current = handlers;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
      const h = current.current;
      if (!h.active()) return;
      if (event.key === "Escape") {
        h.escape();
        return;
      }
      const action = KEYS[event.key];
      if (!action) return;
      action(h);
      event.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
}
