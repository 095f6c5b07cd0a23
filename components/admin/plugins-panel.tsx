"use client";

import { useQuery } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { useMe } from "../app-shell";
import { useTRPC } from "../trpc-provider";

/** The harness plugins this server loaded (admins, operators, auditors): id, version, API range, folder, what each registered. */
export function PluginsPanel() {
  const t = useTranslations("admin.plugins");
  const trpc = useTRPC();
  const me = useMe();
  const allowed = me?.role === "admin" || me?.role === "operator" || me?.role === "auditor";
  const plugins = useQuery(trpc.admin.plugins.queryOptions(undefined, { enabled: allowed }));
  if (!allowed || !plugins.data) return null;
  return (
    <section aria-label={t("label")} className="card stack" data-testid="plugins">
      <h3>{t("label")}</h3>
      {plugins.data.length === 0 ? (
        <p className="muted small">{t.rich("none", { code: (x) => <code>{x}</code> })}</p>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th>{t("plugin")}</th>
              <th>{t("harnesses")}</th>
              <th>{t("agents")}</th>
              <th>{t("middleware")}</th>
              <th>{t("status")}</th>
            </tr>
          </thead>
          <tbody>
            {plugins.data.map((p) => (
              <tr key={p.id}>
                <td>
                  <code>{p.id}</code> {p.version}
                  <div className="muted small">
                    {t("api", { range: p.pluginApi })} · <code>{p.location}</code>
                  </div>
                </td>
                <td>{p.harnesses.join(", ") || "—"}</td>
                <td>{p.agents.join(", ") || "—"}</td>
                <td>{p.middleware.map((m) => m.join("+")).join(", ") || "—"}</td>
                <td>{t("loaded")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
