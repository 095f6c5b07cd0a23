"use client";

import { useQuery } from "@tanstack/react-query";
import type { TAgentView } from "../api-types";
import { ListStates } from "../list-kit/list-states";
import { formatDuration } from "../time-labels";
import { useTRPC } from "../trpc-provider";

const ms = (n: number | null): string => (n === null ? "default" : formatDuration(n));

function AgentCard({ a }: { a: TAgentView }) {
  return (
    <article className="card agent-card" data-testid="agent-card" data-agent={a.name}>
      <header className="approval-head">
        <h3>
          <code>{a.name}</code>
        </h3>
        {a.default ? <span className="badge tone-info">default</span> : null}
        <span className="muted small">
          {a.harness} · model <code>{a.model}</code>
          {a.fallbackModel ? (
            <>
              {" "}
              (fallback <code>{a.fallbackModel}</code>)
            </>
          ) : null}
        </span>
      </header>
      <p className="muted">{a.description}</p>
      <dl className="facts">
        <div>
          <dt>Approval expires after</dt>
          <dd>{ms(a.approvalTtlMs)}</dd>
        </div>
        <div>
          <dt>Client tool expires after</dt>
          <dd>{ms(a.clientToolTtlMs)}</dd>
        </div>
        <div>
          <dt>Execution timeout</dt>
          <dd>{a.executionTimeoutMs === null ? "30m 00s (default)" : ms(a.executionTimeoutMs)}</dd>
        </div>
        <div>
          <dt>Settlement timeout</dt>
          <dd>{a.settlementTimeoutMs === null ? "30s (default)" : ms(a.settlementTimeoutMs)}</dd>
        </div>
        <div>
          <dt>Max turns</dt>
          <dd>{a.maxTurns}</dd>
        </div>
        <div>
          <dt>Own runs decided by</dt>
          <dd data-testid="agent-self-approval">
            {a.selfApproval === "never" ? "someone else, always" : a.selfApproval === "operators" ? "operators and admins (members need someone else)" : "anyone who may decide"}
          </dd>
        </div>
        <div>
          <dt>High-risk approvals need</dt>
          <dd data-testid="agent-quorum">{a.highRiskApprovers === 1 ? "one approver" : `${a.highRiskApprovers} approvers, never the requester`}</dd>
        </div>
        <div>
          <dt>Exec reviewer</dt>
          <dd>{a.usesReviewer ? (a.reviewer ?? "none configured: every review asks a person") : "not used"}</dd>
        </div>
        {a.requiredNodeCommands.length > 0 ? (
          <div className="wide">
            <dt>Declared node commands</dt>
            <dd>
              <code>{a.requiredNodeCommands.join(", ")}</code>
            </dd>
          </div>
        ) : null}
        {a.mcp ? (
          <div className="wide">
            <dt>MCP tools</dt>
            <dd>from COUNTERSIGN_MCP_SERVERS (an unnamed MCP tool needs a person)</dd>
          </div>
        ) : null}
      </dl>
      <table className="table" data-testid="agent-tools">
        <thead>
          <tr>
            <th scope="col">Tool</th>
            <th scope="col">Kind</th>
            <th scope="col">Who decides</th>
          </tr>
        </thead>
        <tbody>
          {a.tools.map((t) => (
            <tr key={t.name}>
              <td>
                <code>{t.name}</code>
                <div className="muted small">{t.description}</div>
              </td>
              <td>{t.kind}</td>
              <td>
                <span className={`badge policy-${t.policy.split(" ")[0]}`}>{t.policy}</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </article>
  );
}

/** The agents and their policies, read-only (configured in code and the environment). */
export function AgentsPanel() {
  const trpc = useTRPC();
  const agents = useQuery(trpc.console.agents.queryOptions());
  return (
    <section aria-label="Agents and policies" className="stack">
      <p className="muted small">Read-only: agents are configured in code (server/agents/config.ts) and the environment.</p>
      <ListStates query={agents} isEmpty={(agents.data ?? []).length === 0} empty="No agents are configured." skeleton={{ rows: 3, columns: 3 }}>
        {(agents.data ?? []).map((a) => (
          <AgentCard key={a.name} a={a} />
        ))}
      </ListStates>
    </section>
  );
}
