"use client";

import { skipToken, useQuery } from "@tanstack/react-query";
import { useTRPC } from "./trpc-provider";

/** Display names for user ids (falls back to the id while loading or when unknown). */
export function useUserNames(ids: readonly (string | null | undefined)[]): (id: string | null | undefined) => string {
  const trpc = useTRPC();
  const unique = [...new Set(ids.filter((id): id is string => !!id))].sort();
  const names = useQuery(trpc.users.names.queryOptions(unique.length > 0 ? { ids: unique } : skipToken, { staleTime: 60_000 }));
  return (id) => (id ? (names.data?.[id] ?? id) : "—");
}
