"use client";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpLink, httpSubscriptionLink, splitLink, TRPCClientError } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { type ReactNode, useState } from "react";
import type { AppRouter } from "@/server/api/trpc/root";
import { checkedFetch } from "./error-sentence";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

/** The tRPC error code of a failed call (e.g. "UNAUTHORIZED"), if it is a tRPC error. */
export function trpcErrorCode(error: unknown): string | null {
  if (!(error instanceof TRPCClientError)) return null;
  const data = error.data as { code?: string } | undefined;
  return data?.code ?? null;
}

/**
 * Options of a query that must not wait for the others asked at the same moment (tRPC batches
 * those into one request, answered when the slowest is): e.g. each chart of the analytics page.
 */
export const UNBATCHED = { trpc: { context: { unbatched: true } } } as const;

const NO_RETRY = new Set(["UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "BAD_REQUEST", "CONFLICT"]);

/** The gateway reason of a failed question call (e.g. "QUESTION_ALREADY_TERMINAL") and its details. */
export function trpcReason(error: unknown): { reason: string | null; details: Record<string, unknown> | null } {
  if (!(error instanceof TRPCClientError)) return { reason: null, details: null };
  const data = error.data as { reason?: string | null; details?: Record<string, unknown> | null } | undefined;
  return { reason: data?.reason ?? null, details: data?.details ?? null };
}

function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 2_000,
        retry: (count, error) => !NO_RETRY.has(trpcErrorCode(error) ?? "") && count < 2,
      },
    },
  });
}

/** The browser's tRPC client: the console session cookie (or an answer-link cookie) authenticates it. */
function makeTrpcClient() {
  const base = typeof window === "undefined" ? "http://localhost" : window.location.origin;
  const url = `${base}/api/trpc`;
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({ url }),
        // A dropped connection or a proxy's error page becomes an error errorSentence() can name.
        // A batch answers when its slowest call has: a call that must not wait for the others
        // (`UNBATCHED`) is a request of its own.
        false: splitLink({
          condition: (op) => op.context.unbatched === true,
          true: httpLink({ url, fetch: checkedFetch() }),
          false: httpBatchLink({ url, fetch: checkedFetch() }),
        }),
      }),
    ],
  });
}

/** React Query + tRPC for the console; all data comes from `/api/trpc` in the browser. */
export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  const [trpcClient] = useState(makeTrpcClient);
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
