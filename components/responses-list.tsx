"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { StatusBadge } from "./badges";
import { TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { LiveIndicator, useLiveChanges } from "./use-live-changes";

/** All responses the signed-in user may see, newest first, kept current by the change feed. */
export function ResponsesList() {
  const trpc = useTRPC();
  const { live } = useLiveChanges();
  const list = useQuery(trpc.responses.list.queryOptions());

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Responses</h1>
          <p className="muted">Every agent run, its status and its full trajectory.</p>
        </div>
        <LiveIndicator live={live} />
      </div>
      {list.error ? (
        <p role="alert" className="error-box">
          Could not load responses: {list.error.message}
        </p>
      ) : list.isPending ? (
        <p className="muted">Loading…</p>
      ) : list.data.length === 0 ? (
        <div className="empty">
          <strong>No responses yet.</strong> Invoke an agent with <code>POST /v1/responses</code> and it shows up here.
        </div>
      ) : (
        <div className="table-wrap">
          <table className="table" data-testid="responses-table">
            <thead>
              <tr>
                <th scope="col">Response</th>
                <th scope="col">Status</th>
                <th scope="col">Agent</th>
                <th scope="col">User</th>
                <th scope="col">Session</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((r) => (
                <tr key={r.id} data-testid="response-row" data-response-id={r.id}>
                  <td>
                    <Link href={`/responses/${r.id}`}>
                      <code>{r.id}</code>
                    </Link>
                  </td>
                  <td className="nowrap">
                    <StatusBadge status={r.status} />
                  </td>
                  <td>{r.agent}</td>
                  <td className="nowrap">{r.user}</td>
                  <td>
                    <code className="muted">{r.sessionId}</code>
                  </td>
                  <td className="nowrap">
                    <TimeAgo iso={r.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
