"use client";

import { skipToken, useQuery } from "@tanstack/react-query";
import { personLabel } from "../server/core/person";
import { useTRPC } from "./trpc-provider";

/**
 * People for user ids, as the console names them: the display name with the email beside it
 * (`personLabel`); the id while loading or when the caller may not know the person.
 */
export function useUserNames(ids: readonly (string | null | undefined)[]): (id: string | null | undefined) => string {
  const trpc = useTRPC();
  const unique = [...new Set(ids.filter((id): id is string => !!id))].sort();
  const names = useQuery(trpc.users.names.queryOptions(unique.length > 0 ? { ids: unique } : skipToken, { staleTime: 60_000 }));
  return (id) => {
    if (!id) return "—";
    const person = names.data?.[id];
    return person ? personLabel(person) : id;
  };
}
