"use client";

import { useQuery } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { useMe } from "../app-shell";
import { PageHead } from "../list-kit/page-head";
import { trpcErrorCode, useTRPC } from "../trpc-provider";
import { usePolicyWindow } from "./policy-state";
import { Simulation } from "./simulation";
import { Suggestions } from "./suggestions";

/** Who reads the Policy page (the server refuses members every procedure of it). */
const READERS = new Set(["admin", "operator", "auditor"]);

/**
 * The Policy page (issue 34, points 2 and 3): rule suggestions from what people decided, applied or
 * dismissed by admins, and a simulation of a candidate agents file over the recorded requests.
 * Operators, auditors and admins; a member who reaches it is told why it is not theirs.
 */
export function PolicyPage() {
  const t = useTranslations("policy");
  const me = useMe();
  const allowed = me !== null && READERS.has(me.role);
  const admin = me?.role === "admin";
  return (
    <>
      <PageHead title={t("title")} lede={t("lede")} />
      {allowed ? <PolicySections admin={admin} /> : <Forbidden />}
    </>
  );
}

function Forbidden() {
  const t = useTranslations("policy");
  return (
    <p className="empty" role="status" data-testid="policy-forbidden">
      {t("forbidden")}
    </p>
  );
}

function PolicySections({ admin }: { admin: boolean }) {
  const t = useTranslations("policy");
  const trpc = useTRPC();
  const { days } = usePolicyWindow();
  // The role may have changed since the page was rendered: the server's refusal is the same sentence.
  const suggestions = useQuery(trpc.policy.suggestions.queryOptions({ days: Number(days) }, { placeholderData: (prev) => prev }));
  if (trpcErrorCode(suggestions.error) === "FORBIDDEN") return <Forbidden />;
  return (
    <>
      {admin ? null : (
        <p className="notice" data-testid="policy-read-only">
          {t("readOnly")}
        </p>
      )}
      <Suggestions admin={admin} />
      <Simulation />
    </>
  );
}
