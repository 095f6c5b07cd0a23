"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import type { TInboxFilter } from "../api-types";
import { DecidedList } from "../decided-list";
import { ListStates } from "../list-kit/list-states";
import { LoadOlder } from "../list-kit/load-older";
import { useTRPC } from "../trpc-provider";

/** The decided history under the inbox, newest first, with the same filters, older pages on demand. */
export function DecidedSection({ filter }: { filter: Omit<TInboxFilter, "status"> }) {
  const t = useTranslations("inbox");
  const trpc = useTRPC();
  const decided = useInfiniteQuery(trpc.inbox.list.infiniteQueryOptions({ status: "decided", limit: 50, ...filter }, { getNextPageParam: (last) => last.nextCursor ?? undefined }));
  const rows = decided.data?.pages.flatMap((p) => p.rows) ?? [];
  return (
    <section aria-labelledby="decided-title" className="section">
      <h2 id="decided-title">{t("decided")}</h2>
      <ListStates query={decided} isEmpty={false} empty={null} skeleton={{ rows: 3, columns: 6 }}>
        <DecidedList rows={rows} />
        <LoadOlder pages={decided} label={t("loadOlderDecisions")} testId="load-older-decisions" />
      </ListStates>
    </section>
  );
}
