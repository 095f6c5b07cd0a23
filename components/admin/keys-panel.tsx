"use client";

import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { type FormEvent, useState } from "react";
import { useMe } from "../app-shell";
import { SelectFilter } from "../filters";
import { DataTable } from "../list-kit/data-table";
import { ListStates } from "../list-kit/list-states";
import { keysetPages, LoadOlder, loadedRows, PAGE_SIZE } from "../list-kit/load-older";
import { TimeAgo } from "../time-labels";
import { useTRPC } from "../trpc-provider";
import { TwoStepAction } from "../two-step-action";
import { useErrorSentence } from "../use-error-sentence";
import { Person, personLabel } from "../person";

/** API keys: create (shown once), see by prefix with last use, revoke; auditors read only. */
export function KeysPanel() {
  const t = useTranslations("admin.keys");
  const col = useTranslations("columns");
  const status = useTranslations("status");
  const trpc = useTRPC();
  const errorText = useErrorSentence();
  const me = useMe();
  const queryClient = useQueryClient();
  const keys = useInfiniteQuery(trpc.admin.apiKeysPage.infiniteQueryOptions({ limit: PAGE_SIZE }, keysetPages));
  const people = useQuery(trpc.console.people.queryOptions(undefined, { enabled: me?.role === "admin" }));
  const refresh = () => void queryClient.invalidateQueries(trpc.admin.apiKeysPage.pathFilter());
  const create = useMutation(trpc.admin.createApiKey.mutationOptions({ onSettled: refresh }));
  const revoke = useMutation(trpc.admin.revokeApiKey.mutationOptions({ onSettled: refresh }));
  const [name, setName] = useState("");
  const [owner, setOwner] = useState("");
  const [confirmRevoke, setConfirmRevoke] = useState<string | null>(null);
  const readOnly = me?.role === "auditor";
  const rows = loadedRows(keys);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) return;
    create.mutate({ name: name.trim(), ...(owner ? { userId: owner } : {}) }, { onSuccess: () => setName("") });
  };
  return (
    <section aria-label={t("label")}>
      {readOnly ? (
        <p className="notice" data-testid="read-only">
          {t("readOnly")}
        </p>
      ) : (
        <form className="card inline-form" onSubmit={submit} data-testid="create-key-form">
          <div className="filter filter-grow">
            <label htmlFor="key-name">{t("newName")}</label>
            <input id="key-name" className="input input-compact" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} placeholder={t("namePlaceholder")} />
          </div>
          {me?.role === "admin" ? (
            <SelectFilter label={t("forUser")} value={owner} onChange={setOwner} options={(people.data ?? []).map((p) => ({ value: p.id, label: personLabel(p) }))} anyLabel={t("myself")} />
          ) : null}
          <button type="submit" className="btn btn-primary" disabled={create.isPending || !name.trim()}>
            {t("create")}
          </button>
        </form>
      )}
      {create.data ? (
        <div className="card callout key-once" role="status" data-testid="new-key">
          <strong>{t("copyNow")}</strong>
          <div className="secret-row">
            <code className="key-value" data-testid="new-key-value">{create.data.apiKey}</code>
            <button type="button" className="btn btn-quiet btn-small" onClick={() => void navigator.clipboard?.writeText(create.data?.apiKey ?? "")}>
              {t("copy")}
            </button>
            <button type="button" className="btn btn-quiet btn-small" onClick={() => create.reset()}>
              {t("done")}
            </button>
          </div>
          <p className="muted small">{t("useAs")}</p>
        </div>
      ) : null}
      {create.error || revoke.error ? (
        <p role="alert" className="error-box">
          {errorText(create.error ?? revoke.error, "change")}
        </p>
      ) : null}
      <ListStates query={keys} isEmpty={rows.length === 0} empty={t("none")} skeleton={{ rows: 3, columns: 7 }}>
        <DataTable
          testId="keys-table"
          rows={rows}
          rowKey={(k) => k.id}
          rowProps={(k) => ({ "data-testid": "key-row", "data-key-id": k.id })}
          columns={[
            { key: "name", header: t("name"), cell: (k) => k.name },
            { key: "key", header: t("key"), kind: "nowrap", cell: (k) => <code>{k.prefix}…</code> },
            { key: "user", header: col("user"), cell: (k) => <Person name={k.user} email={k.userEmail} /> },
            { key: "created", header: col("created"), kind: "nowrap", cell: (k) => <TimeAgo iso={k.createdAt} /> },
            {
              key: "used",
              header: t("lastUsed"),
              kind: "nowrap",
              cell: (k) => <span data-testid="key-last-used">{k.lastUsedAt ? <TimeAgo iso={k.lastUsedAt} /> : <span className="muted">{t("never")}</span>}</span>,
            },
            { key: "state", header: t("state"), cell: (k) => (k.revokedAt ? <span className="badge tone-muted">{status("revoked")}</span> : <span className="badge tone-ok">{status("active")}</span>) },
            {
              key: "actions",
              header: <span className="visually-hidden">{t("actions")}</span>,
              kind: "actions",
              cell: (k) =>
                !readOnly && !k.revokedAt && (k.userId === me?.userId || me?.role === "admin") ? (
                  <TwoStepAction
                    asking={confirmRevoke === k.id}
                    onAsk={() => setConfirmRevoke(k.id)}
                    onCancel={() => setConfirmRevoke(null)}
                    onConfirm={() => revoke.mutate({ keyId: k.id }, { onSettled: () => setConfirmRevoke(null) })}
                    label={t("revoke")}
                    confirmLabel={t("revokeConfirm")}
                    askClassName="btn btn-outline-bad btn-small"
                    ariaLabel={t("revokeLabel", { name: k.name, prefix: k.prefix })}
                  />
                ) : null,
            },
          ]}
        />
        <LoadOlder pages={keys} shown={rows.length} testId="load-older-keys" />
      </ListStates>
    </section>
  );
}
