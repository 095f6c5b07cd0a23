"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import type { TAgentView } from "./api-types";
import { useMe } from "./app-shell";
import { SelectFilter } from "./filters";
import { formatDuration, TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { TwoStepAction } from "./two-step-action";

type TTab = "users" | "keys" | "agents" | "devices";
const ROLES = ["member", "auditor", "operator", "admin"] as const;
const ROLE_TEXT: Record<string, string> = {
  member: "sees and decides only its own",
  auditor: "reads everything, decides nothing",
  operator: "decides any approval, answers any question",
  admin: "operator + users, roles, keys and devices",
};

/** Users and roles, API keys, agents and their policies, paired devices — what each role may see and change. */
export function AdminPage() {
  const me = useMe();
  const readsWorkspace = me?.role !== "member";
  const tabs: Array<{ id: TTab; label: string }> = [
    ...(readsWorkspace ? [{ id: "users" as const, label: "Users & roles" }] : []),
    { id: "keys", label: "API keys" },
    { id: "agents", label: "Agents & policies" },
    ...(readsWorkspace ? [{ id: "devices" as const, label: "Paired devices" }] : []),
  ];
  const [tab, setTab] = useState<TTab>(readsWorkspace ? "users" : "keys");
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Admin</h1>
          <p className="muted">
            {me?.role === "admin" ? "Manage users, roles, API keys and devices; review agent policies." : "Your API keys and the agents' policies. Changes to users, roles and devices need an admin."}
          </p>
        </div>
      </div>
      <div className="tabs" role="tablist" aria-label="Admin sections">
        {tabs.map((t) => (
          <button key={t.id} type="button" role="tab" id={`tab-${t.id}`} aria-selected={tab === t.id} aria-controls={`panel-${t.id}`} onClick={() => setTab(t.id)}>
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className="tab-panel">
        {tab === "users" ? <UsersPanel /> : tab === "keys" ? <KeysPanel /> : tab === "agents" ? <AgentsPanel /> : <DevicesPanel />}
      </div>
    </>
  );
}

const STATUS_TONE: Record<string, string> = { active: "ok", disabled: "warn", deleted: "muted" };

function UsersPanel() {
  const trpc = useTRPC();
  const me = useMe();
  const queryClient = useQueryClient();
  const users = useQuery(trpc.admin.users.queryOptions());
  const refresh = () => void queryClient.invalidateQueries(trpc.admin.users.pathFilter());
  const setRole = useMutation(trpc.admin.setRole.mutationOptions({ onSettled: refresh }));
  const disable = useMutation(trpc.admin.disableUser.mutationOptions({ onSettled: refresh }));
  const enable = useMutation(trpc.admin.enableUser.mutationOptions({ onSettled: refresh }));
  const remove = useMutation(trpc.admin.deleteUser.mutationOptions({ onSettled: refresh }));
  const [confirming, setConfirming] = useState<{ userId: string; action: "disable" | "delete" } | null>(null);
  const isAdmin = me?.role === "admin";
  const error = setRole.error ?? disable.error ?? enable.error ?? remove.error;
  return (
    <section aria-label="Users and roles">
      {error ? (
        <p role="alert" className="error-box">
          {error.message}
        </p>
      ) : null}
      <div className="table-wrap">
        <table className="table" data-testid="users-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col" className="num">
                Active keys
              </th>
              <th scope="col">Since</th>
              {isAdmin ? (
                <th scope="col" className="col-actions">
                  <span className="visually-hidden">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {(users.data ?? []).map((u) => (
              <tr key={u.id} data-testid="user-row" data-user-id={u.id} data-status={u.status}>
                <td>
                  {u.name} {u.id === me?.userId ? <span className="muted small">(you)</span> : null}
                </td>
                <td className="muted">{u.email}</td>
                <td>
                  {isAdmin && u.id !== me?.userId && u.status !== "deleted" ? (
                    <select
                      className="input input-compact"
                      aria-label={`Role of ${u.name}`}
                      value={u.role}
                      disabled={setRole.isPending}
                      onChange={(e) => setRole.mutate({ userId: u.id, role: e.target.value as (typeof ROLES)[number] })}
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  ) : (
                    <span className="role" title={ROLE_TEXT[u.role]}>
                      {u.role}
                    </span>
                  )}
                </td>
                <td>
                  <span className={`badge tone-${STATUS_TONE[u.status] ?? "muted"}`} data-testid="user-status">
                    {u.status}
                  </span>
                </td>
                <td className="num">{u.activeKeys}</td>
                <td className="nowrap">
                  <TimeAgo iso={u.createdAt} />
                </td>
                {isAdmin ? (
                  <td className="nowrap col-actions">
                    {u.id === me?.userId || u.status === "deleted" ? null : (
                      <span className="actions">
                        {u.status === "disabled" ? (
                          <button type="button" className="btn btn-quiet btn-small" disabled={enable.isPending} onClick={() => enable.mutate({ userId: u.id })} aria-label={`Enable ${u.name}`}>
                            Enable
                          </button>
                        ) : (
                          <TwoStepAction
                            asking={confirming?.userId === u.id && confirming.action === "disable"}
                            onAsk={() => setConfirming({ userId: u.id, action: "disable" })}
                            onCancel={() => setConfirming(null)}
                            onConfirm={() => disable.mutate({ userId: u.id }, { onSettled: () => setConfirming(null) })}
                            label="Disable"
                            confirmLabel="Yes, disable"
                            askClassName="btn btn-outline-bad btn-small"
                            busy={disable.isPending}
                            ariaLabel={`Disable ${u.name}: keys, sessions and sockets stop at once`}
                          />
                        )}
                        <TwoStepAction
                          asking={confirming?.userId === u.id && confirming.action === "delete"}
                          onAsk={() => setConfirming({ userId: u.id, action: "delete" })}
                          onCancel={() => setConfirming(null)}
                          onConfirm={() => remove.mutate({ userId: u.id }, { onSettled: () => setConfirming(null) })}
                          label="Delete"
                          confirmLabel="Yes, delete for good"
                          askClassName="btn btn-outline-bad btn-small"
                          busy={remove.isPending}
                          ariaLabel={`Delete ${u.name}: credentials removed for good, history kept`}
                        />
                      </span>
                    )}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <dl className="role-legend small">
        {ROLES.map((r) => (
          <div key={r}>
            <dt>{r}</dt>
            <dd className="muted">{ROLE_TEXT[r]}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

function KeysPanel() {
  const trpc = useTRPC();
  const me = useMe();
  const queryClient = useQueryClient();
  const keys = useQuery(trpc.admin.apiKeys.queryOptions());
  const people = useQuery(trpc.console.people.queryOptions(undefined, { enabled: me?.role === "admin" }));
  const refresh = () => void queryClient.invalidateQueries(trpc.admin.apiKeys.pathFilter());
  const create = useMutation(trpc.admin.createApiKey.mutationOptions({ onSettled: refresh }));
  const revoke = useMutation(trpc.admin.revokeApiKey.mutationOptions({ onSettled: refresh }));
  const [name, setName] = useState("");
  const [owner, setOwner] = useState("");
  const [confirmRevoke, setConfirmRevoke] = useState<string | null>(null);
  const readOnly = me?.role === "auditor";
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) return;
    create.mutate({ name: name.trim(), ...(owner ? { userId: owner } : {}) }, { onSuccess: () => setName("") });
  };
  return (
    <section aria-label="API keys">
      {readOnly ? (
        <p className="notice" data-testid="read-only">
          Auditors are read-only: you can see every key (prefix only) but not create or revoke them.
        </p>
      ) : (
        <form className="card inline-form" onSubmit={submit} data-testid="create-key-form">
          <div className="filter filter-grow">
            <label htmlFor="key-name">New key name</label>
            <input id="key-name" className="input input-compact" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} placeholder="e.g. CI pipeline" />
          </div>
          {me?.role === "admin" ? (
            <SelectFilter label="For user" value={owner} onChange={setOwner} options={(people.data ?? []).map((p) => ({ value: p.id, label: p.name }))} anyLabel="Myself" />
          ) : null}
          <button type="submit" className="btn btn-primary" disabled={create.isPending || !name.trim()}>
            Create key
          </button>
        </form>
      )}
      {create.data ? (
        <div className="card callout key-once" role="status" data-testid="new-key">
          <strong>Copy this key now — it is shown only once.</strong>
          <div className="secret-row">
            <code className="key-value" data-testid="new-key-value">{create.data.apiKey}</code>
            <button type="button" className="btn btn-quiet btn-small" onClick={() => void navigator.clipboard?.writeText(create.data?.apiKey ?? "")}>
              Copy
            </button>
            <button type="button" className="btn btn-quiet btn-small" onClick={() => create.reset()}>
              Done
            </button>
          </div>
          <p className="muted small">Use it as `Authorization: Bearer …`. Countersign stores only its hash.</p>
        </div>
      ) : null}
      {create.error || revoke.error ? (
        <p role="alert" className="error-box">
          {(create.error ?? revoke.error)?.message}
        </p>
      ) : null}
      <div className="table-wrap">
        <table className="table" data-testid="keys-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">User</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">State</th>
              <th scope="col" className="col-actions">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(keys.data ?? []).map((k) => (
              <tr key={k.id} data-testid="key-row" data-key-id={k.id}>
                <td>{k.name}</td>
                <td className="nowrap">
                  <code>{k.prefix}…</code>
                </td>
                <td className="nowrap">{k.user}</td>
                <td className="nowrap">
                  <TimeAgo iso={k.createdAt} />
                </td>
                <td className="nowrap" data-testid="key-last-used">
                  {k.lastUsedAt ? <TimeAgo iso={k.lastUsedAt} /> : <span className="muted">never</span>}
                </td>
                <td>{k.revokedAt ? <span className="badge tone-muted">revoked</span> : <span className="badge tone-ok">active</span>}</td>
                <td className="nowrap col-actions">
                  {!readOnly && !k.revokedAt && (k.userId === me?.userId || me?.role === "admin") ? (
                    <TwoStepAction
                      asking={confirmRevoke === k.id}
                      onAsk={() => setConfirmRevoke(k.id)}
                      onCancel={() => setConfirmRevoke(null)}
                      onConfirm={() => revoke.mutate({ keyId: k.id }, { onSettled: () => setConfirmRevoke(null) })}
                      label="Revoke"
                      confirmLabel="Yes, revoke"
                      askClassName="btn btn-outline-bad btn-small"
                      ariaLabel={`Revoke key ${k.name} (${k.prefix})`}
                    />
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

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

function AgentsPanel() {
  const trpc = useTRPC();
  const agents = useQuery(trpc.console.agents.queryOptions());
  return (
    <section aria-label="Agents and policies" className="stack">
      <p className="muted small">Read-only: agents are configured in code (server/agents/config.ts) and the environment.</p>
      {(agents.data ?? []).map((a) => (
        <AgentCard key={a.name} a={a} />
      ))}
    </section>
  );
}

function DevicesPanel() {
  const trpc = useTRPC();
  const me = useMe();
  const queryClient = useQueryClient();
  const devices = useQuery(trpc.devices.list.queryOptions());
  const refresh = () => void queryClient.invalidateQueries(trpc.devices.list.pathFilter());
  const pair = useMutation(trpc.devices.createPairing.mutationOptions({ onSettled: refresh }));
  const revoke = useMutation(trpc.devices.revoke.mutationOptions({ onSettled: refresh }));
  const [name, setName] = useState("");
  const isAdmin = me?.role === "admin";
  return (
    <section aria-label="Paired devices">
      {isAdmin ? (
        <form
          className="card inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (name.trim()) pair.mutate({ name: name.trim() }, { onSuccess: () => setName("") });
          }}
        >
          <div className="filter filter-grow">
            <label htmlFor="device-name">New device name</label>
            <input id="device-name" className="input input-compact" value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. build-mac" />
          </div>
          <button type="submit" className="btn btn-primary" disabled={pair.isPending || !name.trim()}>
            Create pairing token
          </button>
        </form>
      ) : (
        <p className="notice">Only an admin can pair or revoke devices.</p>
      )}
      {pair.data ? (
        <div className="card callout key-once" role="status" data-testid="pairing-token">
          <strong>Pairing token for {pair.data.name} — shown once, valid until {new Date(pair.data.expiresAt).toLocaleTimeString()}.</strong>
          <div className="secret-row">
            <code className="key-value">{pair.data.token}</code>
          </div>
          <p className="muted small">
            On the device: <code>npm run device -- pair --token …</code>
          </p>
        </div>
      ) : null}
      {pair.error || revoke.error ? (
        <p role="alert" className="error-box">
          {(pair.error ?? revoke.error)?.message}
        </p>
      ) : null}
      {devices.data && devices.data.length === 0 ? (
        <p className="empty">No devices yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="table" data-testid="devices-table">
            <thead>
              <tr>
                <th scope="col">Device</th>
                <th scope="col">State</th>
                <th scope="col">Commands</th>
                <th scope="col">Local policy</th>
                <th scope="col">Last seen</th>
                <th scope="col" className="col-actions">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {(devices.data ?? []).map((d) => (
                <tr key={d.id} data-testid="device-row">
                  <td>
                    <strong>{d.name}</strong>
                    <div className="muted small">
                      <code>{d.id}</code>
                    </div>
                  </td>
                  <td className="nowrap">
                    <span className={`badge tone-${d.status === "paired" ? (d.online ? "ok" : "muted") : d.status === "pending" ? "warn" : "muted"}`}>
                      {d.status === "paired" ? (d.online ? "online" : "offline") : d.status}
                    </span>
                  </td>
                  <td>{d.commands.length > 0 ? <code>{d.commands.join(", ")}</code> : <span className="muted">—</span>}</td>
                  <td className="small">{d.consent ? `consent: ${d.consent}${d.denyPatterns ? `, ${d.denyPatterns} deny patterns` : ""}` : "—"}</td>
                  <td className="nowrap">{d.lastSeenAt ? <TimeAgo iso={d.lastSeenAt} /> : <span className="muted">never</span>}</td>
                  <td className="nowrap col-actions">
                    {isAdmin && d.status !== "revoked" ? (
                      <button type="button" className="btn btn-outline-bad btn-small" disabled={revoke.isPending} onClick={() => revoke.mutate({ deviceId: d.id })}>
                        Revoke
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
