"use client";

import Link from "next/link";
import { useTranslations } from "next-intl";
import { useState } from "react";
import { AgentsPanel } from "./admin/agents-panel";
import { DevicesPanel } from "./admin/devices-panel";
import { KeysPanel } from "./admin/keys-panel";
import { UsersPanel } from "./admin/users-panel";
import { useMe } from "./app-shell";
import { PageHead } from "./list-kit/page-head";

type TTab = "users" | "keys" | "agents" | "devices";

/** Users and roles, API keys, agents and their policies, paired devices — what each role may see and change. */
export function AdminPage() {
  const t = useTranslations("admin");
  const tt = useTranslations("adminTrail");
  const me = useMe();
  const readsWorkspace = me?.role !== "member";
  const tabs: Array<{ id: TTab; label: string }> = [
    ...(readsWorkspace ? [{ id: "users" as const, label: t("tabUsers") }] : []),
    { id: "keys", label: t("tabKeys") },
    { id: "agents", label: t("tabAgents") },
    ...(readsWorkspace ? [{ id: "devices" as const, label: t("tabDevices") }] : []),
  ];
  const [tab, setTab] = useState<TTab>(readsWorkspace ? "users" : "keys");
  return (
    <>
      <PageHead title={t("title")} lede={me?.role === "admin" ? t("ledeAdmin") : t("ledeOther")}>
        {me?.role === "admin" || me?.role === "auditor" ? (
          <Link href="/admin/trail" className="btn btn-quiet" data-testid="open-admin-trail">
            {tt("open")}
          </Link>
        ) : null}
      </PageHead>
      <div className="tabs" role="tablist" aria-label={t("sections")}>
        {tabs.map((x) => (
          <button key={x.id} type="button" role="tab" id={`tab-${x.id}`} aria-selected={tab === x.id} aria-controls={`panel-${x.id}`} onClick={() => setTab(x.id)}>
            {x.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className="tab-panel">
        {tab === "users" ? <UsersPanel /> : tab === "keys" ? <KeysPanel /> : tab === "agents" ? <AgentsPanel /> : <DevicesPanel />}
      </div>
    </>
  );
}
