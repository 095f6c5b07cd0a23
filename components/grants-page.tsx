"use client";

import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useTranslations } from "next-intl";
import { useState } from "react";
import { useMe } from "./app-shell";
import { ArgsView } from "./args-view";
import { StatusBadge } from "./badges";
import { DataTable } from "./list-kit/data-table";
import { ListStates } from "./list-kit/list-states";
import { keysetPages, LoadOlder, loadedRows, PAGE_SIZE } from "./list-kit/load-older";
import { TimeAgo, useFormatTimestamp } from "./time-labels";
import { useTRPC } from "./trpc-provider";
import { TwoStepAction } from "./two-step-action";
import { useUserNames } from "./use-user-names";
import { useErrorSentence } from "./use-error-sentence";
import { PageHead } from "./list-kit/page-head";
import { Person } from "./person";

/**
 * Standing grants: which exact operations run without a prompt, for whom, until when, how often
 * they were used; revocable in one click (the server refuses auditors). Revocation applies before
 * the next use.
 */
export function GrantsPage() {
  const t = useTranslations("grants");
  const trpc = useTRPC();
  const errorText = useErrorSentence();
  const me = useMe();
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<"active" | "all">("active");
  const grants = useInfiniteQuery(trpc.grants.page.infiniteQueryOptions({ status, limit: PAGE_SIZE }, { ...keysetPages, refetchInterval: 10_000 }));
  const revoke = useMutation(trpc.grants.revoke.mutationOptions({ onSettled: () => void queryClient.invalidateQueries(trpc.grants.page.pathFilter()) }));
  const [confirming, setConfirming] = useState<string | null>(null);
  const rows = loadedRows(grants);
  const nameOf = useUserNames(rows.flatMap((g) => [g.createdBy, g.revokedBy]));
  const readOnly = me?.role === "auditor";

  return (
    <>
      <PageHead title={t("title")} lede={t("lede")}>
        <div className="filter">
          <label htmlFor="grant-status">{t("show")}</label>
          <select id="grant-status" className="input input-compact" value={status} onChange={(e) => setStatus(e.target.value as "active" | "all")}>
            <option value="active">{t("showActive")}</option>
            <option value="all">{t("showAll")}</option>
          </select>
        </div>
      </PageHead>
      {readOnly ? (
        <p className="notice" data-testid="read-only">
          {t("readOnly")}
        </p>
      ) : null}
      {revoke.error ? (
        <p role="alert" className="error-box">
          {errorText(revoke.error, "change")}
        </p>
      ) : null}
      <ListStates
        query={grants}
        isEmpty={rows.length === 0}
        skeleton={{ rows: 4, columns: 7 }}
        empty={status === "active" ? t("noneActive") : t("noneYet")}
      >
        <DataTable
          testId="grants-table"
          rows={rows}
          rowKey={(g) => g.id}
          rowProps={(g) => ({ "data-testid": "grant", "data-grant-id": g.id, "data-status": g.status })}
          columns={[
            { key: "state", header: t("state"), cell: (g) => <StatusBadge status={g.status} /> },
            {
              key: "operation",
              header: t("operation"),
              className: "request-cell grant-operation",
              cell: (g) => (
                <>
                  <code>{g.action}</code>
                  <ArgsView value={g.arguments} />
                </>
              ),
            },
            {
              key: "for",
              header: t("for"),
              cell: (g) => (
                <>
                  <Person name={g.user} email={g.userEmail} fallback={g.userId} />
                  <div className="muted small">{g.agent}</div>
                </>
              ),
            },
            { key: "scope", header: t("scope"), kind: "nowrap", cell: (g) => <GrantScopeCell grant={g} /> },
            {
              key: "uses",
              header: t("uses"),
              kind: "nowrap",
              cell: (g) => (
                <>
                  {g.uses}
                  {g.lastUsedAt ? (
                    <div className="muted small">
                      {t.rich("lastUsed", { ago: () => <TimeAgo iso={g.lastUsedAt as string} /> })}
                    </div>
                  ) : null}
                </>
              ),
            },
            {
              key: "granted",
              header: t("granted"),
              cell: (g) => (
                <>
                  {t.rich("grantedBy", { who: nameOf(g.createdBy), ago: () => <TimeAgo iso={g.createdAt} /> })}
                  {g.revokedAt ? (
                    <div className="muted small">
                      {t.rich("revoked", { by: g.revokedBy ? "yes" : "no", who: g.revokedBy ? nameOf(g.revokedBy) : "", ago: () => <TimeAgo iso={g.revokedAt as string} /> })}
                    </div>
                  ) : null}
                </>
              ),
            },
            {
              key: "actions",
              header: <span className="visually-hidden">{t("actions")}</span>,
              kind: "actions",
              cell: (g) =>
                g.status === "active" && !readOnly ? (
                  <TwoStepAction
                    asking={confirming === g.id}
                    onAsk={() => setConfirming(g.id)}
                    onCancel={() => setConfirming(null)}
                    onConfirm={() => revoke.mutate({ grantId: g.id }, { onSettled: () => setConfirming(null) })}
                    label={t("revoke")}
                    confirmLabel={t("revokeNow")}
                    askClassName="btn btn-quiet btn-small"
                    busy={revoke.isPending}
                    testId="revoke-grant"
                  />
                ) : null,
            },
          ]}
        />
        <LoadOlder pages={grants} shown={rows.length} testId="load-older-grants" />
      </ListStates>
    </>
  );
}

/** "this session sess_…" or "until <date>". */
function GrantScopeCell({ grant: g }: { grant: { scope: string; sessionId: string | null; expiresAt: string | null } }) {
  const t = useTranslations("grants");
  const formatTimestamp = useFormatTimestamp();
  if (g.scope === "session")
    return (
      <>
        {t("thisSession")}{" "}
        <Link href={`/sessions/${g.sessionId}`} className="small">
          <code>{g.sessionId?.slice(0, 16)}…</code>
        </Link>
      </>
    );
  return <span title={g.expiresAt ? formatTimestamp(g.expiresAt) : undefined}>{t("until", { when: g.expiresAt ? formatTimestamp(g.expiresAt) : "—" })}</span>;
}
