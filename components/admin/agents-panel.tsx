"use client";

import { useQuery } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import type { TAgentView } from "../api-types";
import { useServerText, useVocab } from "../list-kit/labels";
import { ListStates } from "../list-kit/list-states";
import { ConfigPanel } from "./config-panel";
import { PluginsPanel } from "./plugins-panel";
import { useFormatDuration } from "../time-labels";
import { useTRPC } from "../trpc-provider";

/** Each tool policy's badge class, spelled out whole (scripts/css-selectors.test.ts finds each class in the source). */
const POLICY_CLASS: Record<TAgentView["tools"][number]["policy"], string> = {
  always: "policy-always",
  never: "policy-never",
  review: "policy-review",
  device: "policy-device",
  client: "policy-client",
  person: "policy-person",
};

function AgentCard({ a }: { a: TAgentView }) {
  const t = useTranslations("admin.agents");
  const vocab = useVocab();
  const serverText = useServerText();
  const formatDuration = useFormatDuration();
  const ms = (n: number | null): string => (n === null ? t("default") : formatDuration(n));
  const code = (c: React.ReactNode) => <code>{c}</code>;
  return (
    <article className="card agent-card" data-testid="agent-card" data-agent={a.name}>
      <header className="approval-head">
        <h3>
          <code>{a.name}</code>
        </h3>
        {a.default ? <span className="badge tone-info">{t("default")}</span> : null}
        <span className="muted small">
          {a.harness} · {t.rich("model", { model: a.model, code })}
          {a.fallbackModel ? <> {t.rich("fallback", { model: a.fallbackModel, code })}</> : null}
        </span>
      </header>
      <p className="muted">{serverText.agentDescription(a.name, a.description)}</p>
      <dl className="facts">
        <div>
          <dt>{t("approvalTtl")}</dt>
          <dd>{ms(a.approvalTtlMs)}</dd>
        </div>
        <div>
          <dt>{t("clientToolTtl")}</dt>
          <dd>{ms(a.clientToolTtlMs)}</dd>
        </div>
        <div>
          <dt>{t("executionTimeout")}</dt>
          <dd>{a.executionTimeoutMs === null ? t("withDefault", { value: formatDuration(1_800_000) }) : ms(a.executionTimeoutMs)}</dd>
        </div>
        <div>
          <dt>{t("settlementTimeout")}</dt>
          <dd>{a.settlementTimeoutMs === null ? t("withDefault", { value: formatDuration(30_000) }) : ms(a.settlementTimeoutMs)}</dd>
        </div>
        <div>
          <dt>{t("maxTurns")}</dt>
          <dd>{a.maxTurns}</dd>
        </div>
        <div>
          <dt>{t("selfApproval")}</dt>
          <dd data-testid="agent-self-approval">
            {a.selfApproval === "never" ? t("selfNever") : a.selfApproval === "operators" ? t("selfOperators") : t("selfAnyone")}
          </dd>
        </div>
        <div>
          <dt>{t("quorum")}</dt>
          <dd data-testid="agent-quorum">{t("approvers", { n: a.highRiskApprovers })}</dd>
        </div>
        <div>
          <dt>{t("reviewer")}</dt>
          <dd>{a.usesReviewer ? (a.reviewer ?? t("reviewerNone")) : t("reviewerUnused")}</dd>
        </div>
        {a.requiredNodeCommands.length > 0 ? (
          <div className="wide">
            <dt>{t("nodeCommands")}</dt>
            <dd>
              <code>{a.requiredNodeCommands.join(", ")}</code>
            </dd>
          </div>
        ) : null}
        {a.mcp ? (
          <div className="wide">
            <dt>{t("mcp")}</dt>
            <dd>{t("mcpFrom")}</dd>
          </div>
        ) : null}
      </dl>
      <table className="table" data-testid="agent-tools">
        <thead>
          <tr>
            <th scope="col">{t("tool")}</th>
            <th scope="col">{t("kind")}</th>
            <th scope="col">{t("whoDecides")}</th>
          </tr>
        </thead>
        <tbody>
          {a.tools.map((tool) => (
            <tr key={tool.name}>
              <td>
                <code>{tool.name}</code>
                <div className="muted small" data-testid="tool-description">{serverText.toolDescription(tool.name, tool.description)}</div>
              </td>
              <td>{vocab.toolKind(tool.kind)}</td>
              <td>
                <span className={`badge ${POLICY_CLASS[tool.policy]}`} data-policy={tool.policy}>
                  {vocab.toolPolicy(tool.policy)}
                </span>
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
  const t = useTranslations("admin.agents");
  const trpc = useTRPC();
  const agents = useQuery(trpc.console.agents.queryOptions());
  return (
    <section aria-label={t("label")} className="stack">
      <p className="muted small">{t("readOnly")}</p>
      <ConfigPanel />
      <PluginsPanel />
      <ListStates query={agents} isEmpty={(agents.data ?? []).length === 0} empty={t("none")} skeleton={{ rows: 3, columns: 3 }}>
        {(agents.data ?? []).map((a) => (
          <AgentCard key={a.name} a={a} />
        ))}
      </ListStates>
    </section>
  );
}
