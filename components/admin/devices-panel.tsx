"use client";

import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { useLocale, useTranslations } from "next-intl";
import { useState } from "react";
import { useMe } from "../app-shell";
import { DataTable } from "../list-kit/data-table";
import { ListStates } from "../list-kit/list-states";
import { keysetPages, LoadOlder, loadedRows, PAGE_SIZE } from "../list-kit/load-older";
import { TimeAgo } from "../time-labels";
import { useTRPC } from "../trpc-provider";
import { useErrorSentence } from "../use-error-sentence";

/** Paired devices: pairing tokens, state, commands and local policy; admins revoke. */
export function DevicesPanel() {
  const t = useTranslations("admin.devices");
  const status = useTranslations("status");
  const locale = useLocale();
  const trpc = useTRPC();
  const errorText = useErrorSentence();
  const me = useMe();
  const queryClient = useQueryClient();
  const devices = useInfiniteQuery(trpc.devices.page.infiniteQueryOptions({ limit: PAGE_SIZE }, keysetPages));
  const rows = loadedRows(devices);
  const refresh = () => void queryClient.invalidateQueries(trpc.devices.page.pathFilter());
  const pair = useMutation(trpc.devices.createPairing.mutationOptions({ onSettled: refresh }));
  const revoke = useMutation(trpc.devices.revoke.mutationOptions({ onSettled: refresh }));
  const [name, setName] = useState("");
  const isAdmin = me?.role === "admin";
  return (
    <section aria-label={t("label")}>
      {isAdmin ? (
        <form
          className="card inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (name.trim()) pair.mutate({ name: name.trim() }, { onSuccess: () => setName("") });
          }}
        >
          <div className="filter filter-grow">
            <label htmlFor="device-name">{t("newName")}</label>
            <input id="device-name" className="input input-compact" value={name} onChange={(e) => setName(e.target.value)} placeholder={t("namePlaceholder")} />
          </div>
          <button type="submit" className="btn btn-primary" disabled={pair.isPending || !name.trim()}>
            {t("create")}
          </button>
        </form>
      ) : (
        <p className="notice">{t("adminOnly")}</p>
      )}
      {pair.data ? (
        <div className="card callout key-once" role="status" data-testid="pairing-token">
          <strong>{t("token", { name: pair.data.name, until: new Date(pair.data.expiresAt).toLocaleTimeString(locale) })}</strong>
          <div className="secret-row">
            <code className="key-value">{pair.data.token}</code>
          </div>
          <p className="muted small">
            {t.rich("onDevice", { code: (c) => <code>{c}</code> })}
          </p>
        </div>
      ) : null}
      {pair.error || revoke.error ? (
        <p role="alert" className="error-box">
          {errorText(pair.error ?? revoke.error, "change")}
        </p>
      ) : null}
      <ListStates query={devices} isEmpty={rows.length === 0} empty={t("none")} skeleton={{ rows: 2, columns: 6 }}>
        <DataTable
          testId="devices-table"
          rows={rows}
          rowKey={(d) => d.id}
          rowProps={() => ({ "data-testid": "device-row" })}
          columns={[
            {
              key: "device",
              header: t("device"),
              cell: (d) => (
                <>
                  <strong>{d.name}</strong>
                  <div className="muted small">
                    <code>{d.id}</code>
                  </div>
                </>
              ),
            },
            {
              key: "state",
              header: t("state"),
              kind: "nowrap",
              cell: (d) => (
                <span className={`badge ${d.status === "paired" ? (d.online ? "tone-ok" : "tone-muted") : d.status === "pending" ? "tone-warn" : "tone-muted"}`}>
                  {d.status === "paired" ? (d.online ? t("online") : t("offline")) : d.status === "pending" || d.status === "revoked" ? status(d.status) : d.status}
                </span>
              ),
            },
            { key: "commands", header: t("commands"), cell: (d) => (d.commands.length > 0 ? <code>{d.commands.join(", ")}</code> : <span className="muted">—</span>) },
            { key: "policy", header: t("policy"), className: "small", cell: (d) => (d.consent ? t("consent", { consent: d.consent, n: d.denyPatterns ?? 0 }) : "—") },
            { key: "seen", header: t("lastSeen"), kind: "nowrap", cell: (d) => (d.lastSeenAt ? <TimeAgo iso={d.lastSeenAt} /> : <span className="muted">{t("never")}</span>) },
            {
              key: "actions",
              header: <span className="visually-hidden">{t("actions")}</span>,
              kind: "actions",
              cell: (d) =>
                isAdmin && d.status !== "revoked" ? (
                  <button type="button" className="btn btn-outline-bad btn-small" disabled={revoke.isPending} onClick={() => revoke.mutate({ deviceId: d.id })}>
                    {t("revoke")}
                  </button>
                ) : null,
            },
          ]}
        />
        <LoadOlder pages={devices} shown={rows.length} testId="load-older-devices" />
      </ListStates>
    </section>
  );
}
