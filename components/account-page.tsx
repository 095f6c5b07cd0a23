"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { useState } from "react";
import { LanguageMenu } from "./app-shell";
import { DataTable } from "./list-kit/data-table";
import { ListStates } from "./list-kit/list-states";
import { PageHead } from "./list-kit/page-head";
import { TimeAgo } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { TwoStepAction } from "./two-step-action";
import { useErrorSentence } from "./use-error-sentence";
import { deviceOf } from "./device-of";

/** The signed-in person's own account: the console sessions signed in as them (any can be ended) and their language. */
export function AccountPage() {
  const t = useTranslations("account");
  const trpc = useTRPC();
  const errorText = useErrorSentence();
  const queryClient = useQueryClient();
  const sessions = useQuery(trpc.account.sessions.queryOptions());
  const settings = useQuery(trpc.settings.get.queryOptions());
  const end = useMutation(trpc.account.endSession.mutationOptions({ onSettled: () => void queryClient.invalidateQueries(trpc.account.sessions.pathFilter()) }));
  const [confirming, setConfirming] = useState<string | null>(null);
  const rows = sessions.data ?? [];
  return (
    <>
      <PageHead title={t("title")} lede={t("lede")} />
      <section className="account-section" aria-labelledby="account-sessions">
        <h2 id="account-sessions">{t("sessions")}</h2>
        {end.error ? (
          <p role="alert" className="error-box" data-testid="account-error">
            {errorText(end.error, "change")}
          </p>
        ) : null}
        <ListStates query={sessions} isEmpty={rows.length === 0} empty={t("none")} skeleton={{ rows: 2, columns: 5 }}>
          <DataTable
            testId="account-sessions"
            rows={rows}
            rowKey={(s) => s.id}
            rowProps={(s) => ({ "data-testid": "account-session", "data-current": s.current ? "true" : "false" })}
            columns={[
              {
                key: "device",
                header: t("device"),
                cell: (s) => (
                  <>
                    <span title={s.userAgent ?? undefined}>{deviceOf(s.userAgent) ?? t("unknownDevice")}</span>{" "}
                    {s.current ? <span className="badge tone-ok">{t("current")}</span> : null}
                  </>
                ),
              },
              { key: "address", header: t("address"), className: "muted", cell: (s) => s.ipAddress ?? t("unknownAddress") },
              { key: "began", header: t("began"), kind: "nowrap", cell: (s) => <TimeAgo iso={s.createdAt} /> },
              { key: "lastSeen", header: t("lastSeen"), kind: "nowrap", cell: (s) => <TimeAgo iso={s.lastSeenAt} /> },
              {
                key: "actions",
                header: <span className="visually-hidden">{t("actions")}</span>,
                kind: "actions",
                cell: (s) => (
                  <TwoStepAction
                    asking={confirming === s.id}
                    onAsk={() => setConfirming(s.id)}
                    onCancel={() => setConfirming(null)}
                    onConfirm={() => end.mutate({ id: s.id }, { onSettled: () => setConfirming(null) })}
                    label={s.current ? t("endCurrent") : t("end")}
                    confirmLabel={t("endConfirm")}
                    askClassName="btn btn-outline-bad btn-small"
                    busy={end.isPending}
                    ariaLabel={t("endLabel", { device: deviceOf(s.userAgent) ?? t("unknownDevice") })}
                    testId="end-session"
                  />
                ),
              },
            ]}
          />
        </ListStates>
      </section>
      <section className="account-section" aria-labelledby="account-language">
        <h2 id="account-language">{t("language")}</h2>
        <p className="muted">{t("languageHelp")}</p>
        <LanguageMenu chosen={settings.data?.locale ?? null} />
      </section>
    </>
  );
}
