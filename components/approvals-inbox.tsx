"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRef, useState } from "react";
import { ApprovalCard } from "./approval-card";
import { DecidedList } from "./decided-list";
import { useTRPC } from "./trpc-provider";
import { LiveIndicator, useLiveChanges } from "./use-live-changes";

/** The approvals inbox: pending requests (live) above the decided history. */
export function ApprovalsInbox() {
  const trpc = useTRPC();
  const { live } = useLiveChanges();
  const pending = useQuery(trpc.approvals.list.queryOptions({ status: "pending" }));
  const decided = useQuery(trpc.approvals.list.queryOptions({ status: "decided" }));
  const [announcement, setAnnouncement] = useState("");
  const pendingHeading = useRef<HTMLHeadingElement>(null);
  // The decided card leaves the list; keep keyboard focus in a safe place (not on the next Approve).
  const onDecided = (text: string) => {
    setAnnouncement(text);
    pendingHeading.current?.focus();
  };
  const count = pending.data?.length ?? 0;
  const questions = useQuery(trpc.question.list.queryOptions({ status: "pending" }));
  const questionCount = questions.data?.questions.length ?? 0;

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Approvals</h1>
          <p className="muted">Agents wait here until a person approves or denies the exact action.</p>
        </div>
        <LiveIndicator live={live} />
      </div>
      <p className="visually-hidden" aria-live="polite">
        {announcement}
      </p>
      {questionCount > 0 ? (
        <p className="notice notice-questions" data-testid="questions-waiting">
          <strong>{questionCount}</strong> {questionCount === 1 ? "question is" : "questions are"} also waiting for a person&apos;s answer.{" "}
          <Link href="/questions">Open Questions</Link>
        </p>
      ) : null}

      <section aria-labelledby="pending-title" className="section">
        <h2 id="pending-title" ref={pendingHeading} tabIndex={-1}>
          Pending <span className="count" data-testid="pending-count">{count}</span>
        </h2>
        {pending.error ? (
          <p role="alert" className="error-box">
            Could not load approvals: {pending.error.message}
          </p>
        ) : pending.isPending ? (
          <p className="muted">Loading…</p>
        ) : count === 0 ? (
          <div className="empty">
            <strong>All clear.</strong> No agent is waiting for a decision. New requests appear here automatically.
          </div>
        ) : (
          <div className="stack" data-testid="pending-list">
            {pending.data?.map((a) => <ApprovalCard key={a.id} approval={a} onDecided={onDecided} />)}
          </div>
        )}
      </section>

      <section aria-labelledby="decided-title" className="section">
        <h2 id="decided-title">Decided</h2>
        {decided.error ? (
          <p role="alert" className="error-box">
            Could not load decided approvals: {decided.error.message}
          </p>
        ) : decided.isPending ? (
          <p className="muted">Loading…</p>
        ) : (
          <DecidedList rows={decided.data ?? []} />
        )}
      </section>
    </>
  );
}
