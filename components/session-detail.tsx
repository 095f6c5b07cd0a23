"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useLocale, useTranslations } from "next-intl";
import type { ReactNode } from "react";
import { StatusBadge } from "./badges";
import { TimeAgo } from "./time-labels";
import { TrajectoryAudit } from "./trajectory-audit";
import { trpcErrorCode, useTRPC } from "./trpc-provider";
import { DetailSkeleton } from "./detail-skeleton";
import { personLabel } from "./person";

/** One session: owner, access, its responses and usage, and the whole session's trajectory audit. */
export function SessionDetail({ sessionId }: { sessionId: string }) {
  const trpc = useTRPC();
  const t = useTranslations("session");
  const locale = useLocale();
  const common = useTranslations("common");
  const strong = (chunks: ReactNode) => <strong>{chunks}</strong>;
  const queryClient = useQueryClient();
  const query = useQuery(trpc.audit.session.queryOptions({ sessionId }));
  const setAccess = useMutation(
    trpc.sessions.setAccess.mutationOptions({ onSettled: () => void queryClient.invalidateQueries({ queryKey: trpc.audit.session.queryKey({ sessionId }) }) }),
  );
  if (query.error) {
    return (
      <div className="stack">
        <p role="alert" className="error-box">
          {trpcErrorCode(query.error) === "NOT_FOUND" ? t("missing", { id: sessionId }) : t("loadFailed", { message: query.error.message })}
        </p>
        <Link href="/sessions">{t("all")}</Link>
      </div>
    );
  }
  const s = query.data;
  if (!s) return <DetailSkeleton label={common("loading")} />;
  const active = s.responses.filter((r) => r.status === "in_progress" || r.status === "requires_action").length;
  return (
    <>
      <p className="crumbs">
        <Link href="/sessions">{t("all")}</Link>
      </p>
      <div className="page-head">
        <div>
          <h1 className="response-title">{t.rich("title", { id: s.id, code: (chunks) => <code>{chunks}</code> })}</h1>
          <p className="muted">
            {t.rich("meta", { agent: s.agent, user: personLabel({ name: s.user, email: s.userEmail }), strong })}
            <TimeAgo iso={s.createdAt} />
          </p>
        </div>
      </div>
      <div className="grid-2">
        <section className="card" aria-labelledby="responses-title">
          <h2 id="responses-title">
            {t("responses")} <span className="count">{s.responses.length}</span>
          </h2>
          <div className="table-wrap">
            <table className="table" data-testid="session-responses">
              <thead>
                <tr>
                  <th scope="col">{t("response")}</th>
                  <th scope="col">{t("status")}</th>
                  <th scope="col" className="num">
                    {t("outputTokens")}
                  </th>
                  <th scope="col">{t("created")}</th>
                </tr>
              </thead>
              <tbody>
                {s.responses.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <Link href={`/responses/${r.id}`}>
                        <code>{r.id}</code>
                      </Link>
                    </td>
                    <td>
                      <StatusBadge status={r.status} />
                    </td>
                    <td className="num">{r.outputTokens.toLocaleString(locale)}</td>
                    <td className="nowrap">
                      <TimeAgo iso={r.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
        <section className="card" aria-labelledby="session-facts">
          <h2 id="session-facts">{t("session")}</h2>
          <dl className="facts">
            <div>
              <dt>{t("outputTokens")}</dt>
              <dd data-testid="session-output-tokens">{s.outputTokens.toLocaleString(locale)}</dd>
            </div>
            <div>
              <dt>{t("active")}</dt>
              <dd>{active}</dd>
            </div>
            <div className="wide">
              <dt>{t("access")}</dt>
              <dd data-testid="session-access">
                {s.access === "full" ? t("full") : t("default")}
              </dd>
            </div>
            {s.fullAccessGrant ? (
              <div className="wide">
                <dt>{t("grantedTitle")}</dt>
                <dd data-testid="session-access-grant">
                  {t.rich("grantedBy", { who: s.fullAccessGrant.by ? personLabel({ name: s.fullAccessGrant.by, email: s.fullAccessGrant.byEmail }) : (s.fullAccessGrant.byUserId ?? t("theCli")), strong })}
                  <TimeAgo iso={s.fullAccessGrant.at} />
                </dd>
              </div>
            ) : null}
          </dl>
          {s.canChangeAccess ? (
            <button
              type="button"
              className="btn btn-quiet"
              disabled={setAccess.isPending}
              onClick={() => setAccess.mutate({ sessionId: s.id, access: s.access === "full" ? "default" : "full" })}
            >
              {s.access === "full" ? t("toDefault") : t("grantFull")}
            </button>
          ) : s.access === "default" ? (
            <p className="muted small" data-testid="session-access-note">
              {t("onlyOperators")}
            </p>
          ) : null}
          {setAccess.error ? (
            <p role="alert" className="error-box">
              {setAccess.error.message}
            </p>
          ) : null}
        </section>
      </div>
      <section className="section" aria-labelledby="session-trajectory-title">
        <h2 id="session-trajectory-title">{t("trajectory")}</h2>
        <TrajectoryAudit scope={{ sessionId }} liveKey={s.responses.map((r) => `${r.id}:${r.status}`).join(",")} showResponse />
      </section>
    </>
  );
}
