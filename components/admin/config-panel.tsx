"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { useMe } from "../app-shell";
import { TimeAgo } from "../time-labels";
import { useTRPC } from "../trpc-provider";

/**
 * The effective agents configuration (COUNTERSIGN_AGENTS_FILE as validated, secrets redacted),
 * read-only, for admins and auditors; admins can reload it (the next runs use it).
 */
export function ConfigPanel() {
  const t = useTranslations("admin.config");
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const me = useMe();
  const allowed = me?.role === "admin" || me?.role === "auditor";
  const config = useQuery(trpc.admin.agentsConfig.queryOptions(undefined, { enabled: allowed }));
  const reload = useMutation(
    trpc.admin.reloadAgents.mutationOptions({
      onSettled: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.admin.agentsConfig.queryKey() });
        await queryClient.invalidateQueries({ queryKey: trpc.console.agents.queryKey() });
      },
    }),
  );
  if (!allowed || !config.data) return null;
  const c = config.data;
  const result = reload.data;
  return (
    <section aria-label={t("label")} className="card stack" data-testid="effective-config">
      <header className="approval-head">
        <h3>{t("label")}</h3>
        {me?.role === "admin" && c.source === "file" ? (
          <button type="button" className="button" onClick={() => reload.mutate()} disabled={reload.isPending} data-testid="reload-config">
            {t("reload")}
          </button>
        ) : null}
      </header>
      <p className="muted small">
        {c.source === "file" ? t.rich("fromFile", { path: c.path ?? "", code: (x) => <code>{x}</code> }) : t("builtIn")} · {t("loaded")} <TimeAgo iso={c.loadedAt} />
      </p>
      {result ? (
        <p role="status" className={result.ok ? "muted small" : "error-box"} data-testid="reload-result">
          {result.ok ? t("reloaded", { agents: result.agents.join(", ") }) : t("reloadFailed", { error: result.error })}
        </p>
      ) : null}
      {c.lastError && !result ? (
        <p role="alert" className="error-box">
          {t("lastError", { error: c.lastError })}
        </p>
      ) : null}
      {c.file ? <pre className="code" data-testid="config-json">{JSON.stringify(c.file, null, 2)}</pre> : null}
      <p className="muted small">{t("howTo")}</p>
    </section>
  );
}
