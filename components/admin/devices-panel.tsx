"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useMe } from "../app-shell";
import { DataTable } from "../list-kit/data-table";
import { ListStates } from "../list-kit/list-states";
import { TimeAgo } from "../time-labels";
import { useTRPC } from "../trpc-provider";

/** Paired devices: pairing tokens, state, commands and local policy; admins revoke. */
export function DevicesPanel() {
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
      <ListStates query={devices} isEmpty={(devices.data ?? []).length === 0} empty="No devices yet." skeleton={{ rows: 2, columns: 6 }}>
        <DataTable
          testId="devices-table"
          rows={devices.data ?? []}
          rowKey={(d) => d.id}
          rowProps={() => ({ "data-testid": "device-row" })}
          columns={[
            {
              key: "device",
              header: "Device",
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
              header: "State",
              kind: "nowrap",
              cell: (d) => (
                <span className={`badge tone-${d.status === "paired" ? (d.online ? "ok" : "muted") : d.status === "pending" ? "warn" : "muted"}`}>
                  {d.status === "paired" ? (d.online ? "online" : "offline") : d.status}
                </span>
              ),
            },
            { key: "commands", header: "Commands", cell: (d) => (d.commands.length > 0 ? <code>{d.commands.join(", ")}</code> : <span className="muted">—</span>) },
            { key: "policy", header: "Local policy", className: "small", cell: (d) => (d.consent ? `consent: ${d.consent}${d.denyPatterns ? `, ${d.denyPatterns} deny patterns` : ""}` : "—") },
            { key: "seen", header: "Last seen", kind: "nowrap", cell: (d) => (d.lastSeenAt ? <TimeAgo iso={d.lastSeenAt} /> : <span className="muted">never</span>) },
            {
              key: "actions",
              header: <span className="visually-hidden">Actions</span>,
              kind: "actions",
              cell: (d) =>
                isAdmin && d.status !== "revoked" ? (
                  <button type="button" className="btn btn-outline-bad btn-small" disabled={revoke.isPending} onClick={() => revoke.mutate({ deviceId: d.id })}>
                    Revoke
                  </button>
                ) : null,
            },
          ]}
        />
      </ListStates>
    </section>
  );
}
