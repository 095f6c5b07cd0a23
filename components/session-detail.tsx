"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { StatusBadge } from "./badges";
import { TimeAgo } from "./time-labels";
import { TrajectoryAudit } from "./trajectory-audit";
import { trpcErrorCode, useTRPC } from "./trpc-provider";

/** One session: owner, access, its responses and usage, and the whole session's trajectory audit. */
export function SessionDetail({ sessionId }: { sessionId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const query = useQuery(trpc.audit.session.queryOptions({ sessionId }));
  const setAccess = useMutation(
    trpc.sessions.setAccess.mutationOptions({ onSettled: () => void queryClient.invalidateQueries({ queryKey: trpc.audit.session.queryKey({ sessionId }) }) }),
  );
  if (query.error) {
    return (
      <div className="stack">
        <p role="alert" className="error-box">
          {trpcErrorCode(query.error) === "NOT_FOUND" ? `There is no session ${sessionId} (or it is not yours).` : `Could not load the session: ${query.error.message}`}
        </p>
        <Link href="/sessions">← All sessions</Link>
      </div>
    );
  }
  const s = query.data;
  if (!s) return <p className="muted">Loading…</p>;
  const active = s.responses.filter((r) => r.status === "in_progress" || r.status === "requires_action").length;
  return (
    <>
      <p className="crumbs">
        <Link href="/sessions">← All sessions</Link>
      </p>
      <div className="page-head">
        <div>
          <h1 className="response-title">
            Session <code>{s.id}</code>
          </h1>
          <p className="muted">
            Agent <strong>{s.agent}</strong> · for <strong>{s.user}</strong> · created <TimeAgo iso={s.createdAt} />
          </p>
        </div>
      </div>
      <div className="grid-2">
        <section className="card" aria-labelledby="responses-title">
          <h2 id="responses-title">
            Responses <span className="count">{s.responses.length}</span>
          </h2>
          <div className="table-wrap">
            <table className="table" data-testid="session-responses">
              <thead>
                <tr>
                  <th scope="col">Response</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="num">
                    Output tokens
                  </th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {s.responses.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <Link href={`/responses/${r.id}`}>
                        <code>{r.id}</code>
                      </Link>
                    </td>
                    <td>
                      <StatusBadge status={r.status} />
                    </td>
                    <td className="num">{r.outputTokens.toLocaleString()}</td>
                    <td className="nowrap">
                      <TimeAgo iso={r.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
        <section className="card" aria-labelledby="session-facts">
          <h2 id="session-facts">Session</h2>
          <dl className="facts">
            <div>
              <dt>Output tokens</dt>
              <dd data-testid="session-output-tokens">{s.outputTokens.toLocaleString()}</dd>
            </div>
            <div>
              <dt>Active responses</dt>
              <dd>{active}</dd>
            </div>
            <div className="wide">
              <dt>Access</dt>
              <dd data-testid="session-access">
                {s.access === "full" ? "Full access: declared node commands run on paired devices without a prompt" : "Default: node commands need approval"}
              </dd>
            </div>
            {s.fullAccessGrant ? (
              <div className="wide">
                <dt>Full access granted</dt>
                <dd data-testid="session-access-grant">
                  by <strong>{s.fullAccessGrant.by ?? s.fullAccessGrant.byUserId ?? "the CLI"}</strong> <TimeAgo iso={s.fullAccessGrant.at} />
                </dd>
              </div>
            ) : null}
          </dl>
          {s.canChangeAccess ? (
            <button
              type="button"
              className="btn btn-quiet"
              disabled={setAccess.isPending}
              onClick={() => setAccess.mutate({ sessionId: s.id, access: s.access === "full" ? "default" : "full" })}
            >
              {s.access === "full" ? "Switch to default access" : "Grant full access"}
            </button>
          ) : s.access === "default" ? (
            <p className="muted small" data-testid="session-access-note">
              Only an operator or an admin can grant Full access.
            </p>
          ) : null}
          {setAccess.error ? (
            <p role="alert" className="error-box">
              {setAccess.error.message}
            </p>
          ) : null}
        </section>
      </div>
      <section className="section" aria-labelledby="session-trajectory-title">
        <h2 id="session-trajectory-title">Session trajectory</h2>
        <TrajectoryAudit scope={{ sessionId }} liveKey={s.responses.map((r) => `${r.id}:${r.status}`).join(",")} showResponse />
      </section>
    </>
  );
}
