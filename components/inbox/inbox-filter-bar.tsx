"use client";

import { useQuery } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { useState } from "react";
import { RISKS } from "@/server/core/vocabulary";
import type { TInboxFilter } from "../api-types";
import { SelectFilter, ToggleGroup } from "../filters";
import { FilterBar } from "../list-kit/filter-bar";
import { useVocab } from "../list-kit/labels";
import { useTRPC } from "../trpc-provider";
import { personLabel } from "../person";

type TRisk = (typeof RISKS)[number];
const AGES = [
  { value: "60000", label: "olderThan1m" },
  { value: "600000", label: "olderThan10m" },
  { value: "3600000", label: "olderThan1h" },
] as const;
const REVIEWER = [
  { value: "ask", label: "reviewerAsked" },
  { value: "none", label: "noReviewer" },
] as const;

/** The inbox's filters as state, and the `inbox.list` input they make (status aside). */
export function useInboxFilter() {
  const [agent, setAgent] = useState("");
  const [userId, setUserId] = useState("");
  const [risks, setRisks] = useState<TRisk[]>([]);
  const [reviewer, setReviewer] = useState("");
  const [age, setAge] = useState("");
  const [teams, setTeams] = useState("");
  const filter: Omit<TInboxFilter, "status"> = {
    ...(agent ? { agent } : {}),
    ...(userId ? { userId } : {}),
    ...(risks.length > 0 ? { risks } : {}),
    ...(reviewer ? { reviewer: reviewer as "ask" | "none" } : {}),
    ...(age ? { olderThanMs: Number(age) } : {}),
    ...(teams === "mine" ? { myTeams: true } : {}),
  };
  return {
    filter,
    filtered: Object.keys(filter).length > 0,
    values: { agent, userId, risks, reviewer, age, teams },
    set: { setAgent, setUserId, setRisks, setReviewer, setAge, setTeams },
  };
}

/** Agent, user, risk, reviewer verdict, age and (for people in teams) "my teams" filters of the inbox. */
export function InboxFilterBar({ state, seesEveryone }: { state: ReturnType<typeof useInboxFilter>; seesEveryone: boolean }) {
  const t = useTranslations("inbox.filter");
  const vocab = useVocab();
  const trpc = useTRPC();
  const agents = useQuery(trpc.console.agents.queryOptions(undefined, { staleTime: 300_000 }));
  const people = useQuery(trpc.console.people.queryOptions(undefined, { enabled: seesEveryone, staleTime: 60_000 }));
  const me = useQuery(trpc.me.queryOptions(undefined, { staleTime: 60_000 }));
  const myTeams = me.data?.groups ?? [];
  const { values: v, set } = state;
  return (
    <FilterBar testId="inbox-filters">
      <SelectFilter label={t("agent")} value={v.agent} onChange={set.setAgent} options={(agents.data ?? []).map((a) => ({ value: a.name, label: a.name }))} testId="filter-agent" />
      {seesEveryone ? <SelectFilter label={t("user")} value={v.userId} onChange={set.setUserId} options={(people.data ?? []).map((p) => ({ value: p.id, label: personLabel(p) }))} testId="filter-user" /> : null}
      <ToggleGroup label={t("risk")} values={RISKS} selected={v.risks} onChange={set.setRisks} labelOf={vocab.risk} testId="filter-risk" />
      <SelectFilter label={t("reviewer")} value={v.reviewer} onChange={set.setReviewer} options={REVIEWER.map((o) => ({ value: o.value, label: t(o.label) }))} testId="filter-reviewer" />
      <SelectFilter label={t("age")} value={v.age} onChange={set.setAge} options={AGES.map((o) => ({ value: o.value, label: t(o.label) }))} testId="filter-age" />
      {myTeams.length > 0 ? (
        <SelectFilter label={t("teams")} value={v.teams} onChange={set.setTeams} options={[{ value: "mine", label: t("myTeams", { teams: myTeams.join(", ") }) }]} testId="filter-teams" />
      ) : null}
    </FilterBar>
  );
}
