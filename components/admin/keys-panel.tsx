"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useMe } from "../app-shell";
import { SelectFilter } from "../filters";
import { DataTable } from "../list-kit/data-table";
import { ListStates } from "../list-kit/list-states";
import { TimeAgo } from "../time-labels";
import { useTRPC } from "../trpc-provider";
import { TwoStepAction } from "../two-step-action";

/** API keys: create (shown once), see by prefix with last use, revoke; auditors read only. */
export function KeysPanel() {
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
  const rows = keys.data ?? [];
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
      <ListStates query={keys} isEmpty={rows.length === 0} empty="No API keys yet." skeleton={{ rows: 3, columns: 7 }}>
        <DataTable
          testId="keys-table"
          rows={rows}
          rowKey={(k) => k.id}
          rowProps={(k) => ({ "data-testid": "key-row", "data-key-id": k.id })}
          columns={[
            { key: "name", header: "Name", cell: (k) => k.name },
            { key: "key", header: "Key", kind: "nowrap", cell: (k) => <code>{k.prefix}…</code> },
            { key: "user", header: "User", kind: "nowrap", cell: (k) => k.user },
            { key: "created", header: "Created", kind: "nowrap", cell: (k) => <TimeAgo iso={k.createdAt} /> },
            {
              key: "used",
              header: "Last used",
              kind: "nowrap",
              cell: (k) => <span data-testid="key-last-used">{k.lastUsedAt ? <TimeAgo iso={k.lastUsedAt} /> : <span className="muted">never</span>}</span>,
            },
            { key: "state", header: "State", cell: (k) => (k.revokedAt ? <span className="badge tone-muted">revoked</span> : <span className="badge tone-ok">active</span>) },
            {
              key: "actions",
              header: <span className="visually-hidden">Actions</span>,
              kind: "actions",
              cell: (k) =>
                !readOnly && !k.revokedAt && (k.userId === me?.userId || me?.role === "admin") ? (
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
                ) : null,
            },
          ]}
        />
      </ListStates>
    </section>
  );
}
