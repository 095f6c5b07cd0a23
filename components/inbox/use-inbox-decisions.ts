"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { type RefObject, useState } from "react";
import type { TInboxRow } from "../api-types";
import type { TDecision, TDecisionExtra } from "../approval-card";
import { useArgsWords } from "../args-view";
import type { TConfirming } from "../decision-confirm";
import { ownOutcome } from "../decision-outcome";
import { useTRPC } from "../trpc-provider";
import { useServerText } from "../list-kit/labels";
import { useErrorSentence } from "../use-error-sentence";
import type { useKeptDecisions } from "../use-kept-decisions";

/** 409s that mean the approval was settled by someone else (not a changed request, which stays pending). */
const SETTLED_ELSEWHERE = new Set(["already_decided", "expired", "conflict"]);
const domainCodeOf = (error: unknown): string | null => (error as { data?: { domainCode?: string | null } } | null)?.data?.domainCode ?? null;

/** Whether the caller may put a row in a bulk decision: never high risk, never one the server would refuse. */
export const bulkable = (r: TInboxRow): boolean => r.risk !== "high" && r.refusal === null;

type TArgs = {
  canDecide: boolean;
  kept: ReturnType<typeof useKeptDecisions>;
  /** Whether keyboard focus is inside the decided item (it then moves to `safeFocus`, never onto the next Approve). */
  focusInside: (approvalId: string) => boolean;
  safeFocus: RefObject<HTMLElement | null>;
};

/**
 * Sending decisions from the inbox: one at a time (a grant or a high-risk approval asks to confirm
 * first) or in bulk, with what each outcome was (announced, kept in the list when settled
 * elsewhere) and each failure as a sentence on its item.
 */
export function useInboxDecisions({ canDecide, kept, focusInside, safeFocus }: TArgs) {
  const t = useTranslations("decisionOutcome");
  const errorSentence = useErrorSentence();
  const serverText = useServerText();
  const words = useArgsWords();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState<Set<string>>(new Set());
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [announcement, setAnnouncement] = useState("");
  const [confirming, setConfirming] = useState<TConfirming | null>(null);
  const [bulkNote, setBulkNote] = useState<string | null>(null);
  const decideOne = useMutation(trpc.approvals.decide.mutationOptions());
  const decideMany = useMutation(trpc.inbox.decideMany.mutationOptions());

  const refresh = () => {
    void queryClient.invalidateQueries(trpc.inbox.list.pathFilter());
    void queryClient.invalidateQueries(trpc.approvals.pathFilter());
    void queryClient.invalidateQueries(trpc.console.waiting.pathFilter());
  };

  const send = async (a: TInboxRow, decision: TDecision, extra: TDecisionExtra = {}) => {
    setBusy((b) => new Set(b).add(a.id));
    setErrors(({ [a.id]: _, ...rest }) => rest);
    kept.claim(a.id);
    try {
      const decided = await decideOne.mutateAsync({ approvalId: a.id, decision, bindingHash: a.bindingHash, ...extra });
      if (!decided.settled) {
        kept.release(a.id);
        setAnnouncement(t("recordedQuorum", { n: decided.approvals, of: decided.requiredApprovals, message: serverText.summary(a) }));
      } else {
        const outcome = ownOutcome(a, decision, extra, t, words, serverText.summary);
        kept.keepMine(a, outcome);
        setAnnouncement(outcome);
      }
      if (focusInside(a.id)) safeFocus.current?.focus();
    } catch (error) {
      // Someone else settled it first: the item stays and says who, how and when.
      if (SETTLED_ELSEWHERE.has(domainCodeOf(error) ?? "")) kept.keepLost(a, decision);
      else kept.release(a.id);
      const sentence = errorSentence(error, "decide");
      setErrors((e) => ({ ...e, [a.id]: sentence }));
      setAnnouncement(sentence);
    } finally {
      setBusy((b) => {
        const next = new Set(b);
        next.delete(a.id);
        return next;
      });
      refresh();
    }
  };

  const decide = (a: TInboxRow, decision: TDecision, extra: TDecisionExtra = {}) => {
    if (!canDecide || busy.has(a.id)) return;
    // The card shows why instead of the buttons; a shortcut must not send what the server refuses.
    if (a.refusal !== null) {
      setAnnouncement(a.refusalCode ? serverText.refusal(a.refusalCode) : a.refusal);
      return;
    }
    // A standing grant is always confirmed with its scope named; high risk always asks too.
    if (decision === "approve" && (a.risk === "high" || extra.grant)) setConfirming({ a, extra });
    else void send(a, decision, extra);
  };

  const sendBulk = async (bulkRows: TInboxRow[], decision: TDecision): Promise<void> => {
    for (const r of bulkRows) kept.claim(r.id);
    try {
      const outcomes = await decideMany.mutateAsync({ decision, items: bulkRows.map((r) => ({ approvalId: r.id, bindingHash: r.bindingHash })) });
      const failed = outcomes.filter((o) => !o.ok);
      const note = t("bulkNote", { decision, n: outcomes.length - failed.length, of: outcomes.length, failed: failed.length });
      setAnnouncement(note);
      setBulkNote(note);
      // A failed item was settled elsewhere (its card says by whom) or is still pending with its reason.
      for (const f of failed) {
        const row = bulkRows.find((r) => r.id === f.approvalId);
        if (row) kept.keepLost(row, decision);
      }
      setErrors((e) => ({ ...e, ...Object.fromEntries(failed.map((f) => [f.approvalId, serverText.reason(f.serverText) ?? f.error ?? t("notDecided")])) }));
    } catch {
      for (const r of bulkRows) kept.release(r.id);
    } finally {
      refresh();
    }
  };

  return {
    busy,
    errors,
    announcement,
    setAnnouncement,
    confirming,
    setConfirming,
    bulkNote,
    setBulkNote,
    decide,
    send,
    sendBulk,
    bulkPending: decideMany.isPending,
    bulkError: decideMany.error,
  };
}
