"use client";

import { useState } from "react";
import { AgentsPanel } from "./admin/agents-panel";
import { DevicesPanel } from "./admin/devices-panel";
import { KeysPanel } from "./admin/keys-panel";
import { UsersPanel } from "./admin/users-panel";
import { useMe } from "./app-shell";

type TTab = "users" | "keys" | "agents" | "devices";

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
