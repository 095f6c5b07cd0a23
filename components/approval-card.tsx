"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useId } from "react";
import type { TApprovalRow } from "./api-types";
import { RiskBadge } from "./badges";
import { JsonView } from "./json-view";
import { Countdown, TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { useNow } from "./use-now";

/** One pending approval with everything needed to decide it, and the Approve / Deny buttons. */
export function ApprovalCard({ approval: a, onDecided }: { approval: TApprovalRow; onDecided: (text: string) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const titleId = useId();
  const messageId = useId();
  const now = useNow(1000);
  const expired = new Date(a.expiresAt).getTime() <= now;
  const decide = useMutation(
    trpc.approvals.decide.mutationOptions({
      onSuccess: (result) => onDecided(`${result.decision === "approve" ? "Approved" : "Denied"}: ${a.message}`),
      onSettled: () => {
        void queryClient.invalidateQueries(trpc.approvals.pathFilter());
        void queryClient.invalidateQueries(trpc.responses.pathFilter());
      },
    }),
  );
  const run = (decision: "approve" | "deny") => decide.mutate({ approvalId: a.id, decision, bindingHash: a.bindingHash });

  return (
    <article className={`card approval risk-edge-${a.risk}`} aria-labelledby={titleId} data-testid="approval" data-approval-id={a.id}>
      <header className="approval-head">
        <RiskBadge risk={a.risk} />
        <h3 id={titleId} className="approval-action">
          <code>{a.action}</code>
        </h3>
        <span className="approval-when">
          <span>
            requested <TimeAgo iso={a.createdAt} />
          </span>
          <Countdown iso={a.expiresAt} />
        </span>
      </header>
      <p id={messageId} className="approval-message">
        {a.message}
      </p>
      <dl className="facts">
        <div>
          <dt>Agent</dt>
          <dd>{a.agent}</dd>
        </div>
        <div>
          <dt>User</dt>
          <dd>{a.user}</dd>
        </div>
        <div>
          <dt>Session</dt>
          <dd>
            <code>{a.sessionId}</code>
          </dd>
        </div>
        <div>
          <dt>Response</dt>
          <dd>
            <Link href={`/responses/${a.responseId}`}>
              <code>{a.responseId}</code>
            </Link>
          </dd>
        </div>
        <div className="wide">
          <dt>Working directory</dt>
          <dd>
            <code>{a.cwd ?? "—"}</code>
          </dd>
        </div>
      </dl>
      <div className="args">
        <div className="label">Arguments</div>
        <JsonView value={a.arguments} />
      </div>
      {decide.error ? (
        <p role="alert" className="error-box">
          {decide.error.message}
        </p>
      ) : null}
      <div className="actions">
        <button type="button" className="btn btn-approve" onClick={() => run("approve")} disabled={decide.isPending || expired} aria-describedby={messageId}>
          Approve
        </button>
        <button type="button" className="btn btn-deny" onClick={() => run("deny")} disabled={decide.isPending || expired} aria-describedby={messageId}>
          Deny
        </button>
        {decide.isPending ? <span className="muted">Sending decision…</span> : null}
        {expired ? <span className="muted">This request expired and can no longer be decided.</span> : null}
      </div>
    </article>
  );
}
