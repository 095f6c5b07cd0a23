"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { type ReactNode, useEffect, useState } from "react";
import { trpcErrorCode, useTRPC } from "./trpc-provider";

const NAV = [
  { href: "/", label: "Approvals" },
  { href: "/questions", label: "Questions" },
  { href: "/responses", label: "Responses" },
];

/** Signed-in frame of every console page: header, navigation, and the redirect to /login. */
export function AppShell({ children }: { children: ReactNode }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const queryClient = useQueryClient();
  const me = useQuery(trpc.me.queryOptions());
  // Pending questions, for the count next to "Questions" (kept current by the pages' live feed).
  const questions = useQuery(trpc.question.list.queryOptions({ status: "pending" }, { enabled: Boolean(me.data) }));
  const waiting = questions.data?.questions.length ?? 0;
  const [signingOut, setSigningOut] = useState(false);
  const unauthorized = trpcErrorCode(me.error) === "UNAUTHORIZED";

  useEffect(() => {
    if (unauthorized) router.replace(`/login?next=${encodeURIComponent(pathname)}`);
  }, [unauthorized, router, pathname]);

  async function signOut() {
    setSigningOut(true);
    await fetch("/api/auth/sign-out", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }).catch(() => null);
    queryClient.clear();
    router.replace("/login");
  }

  const isActive = (href: string) => (href === "/" ? pathname === "/" : pathname.startsWith(href));

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar-inner">
          <Link href="/" className="brand">
            <span className="brand-mark" aria-hidden="true">
              ✓
            </span>
            Countersign
          </Link>
          <nav aria-label="Main">
            <ul className="nav">
              {NAV.map((item) => (
                <li key={item.href}>
                  <Link href={item.href} aria-current={isActive(item.href) ? "page" : undefined}>
                    {item.label}
                    {item.href === "/questions" && waiting > 0 ? (
                      <>
                        <span className="nav-count" aria-hidden="true" data-testid="nav-questions-count">
                          {waiting}
                        </span>
                        <span className="visually-hidden">, {waiting} waiting</span>
                      </>
                    ) : null}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
          <div className="account">
            {me.data ? (
              <span className="account-name" data-testid="signed-in-user">
                {me.data.name} <span className="role">{me.data.role}</span>
              </span>
            ) : null}
            <button type="button" className="btn btn-quiet" onClick={signOut} disabled={signingOut || !me.data}>
              Sign out
            </button>
          </div>
        </div>
      </header>
      <main id="main" className="page">
        {me.data ? (
          children
        ) : me.error && !unauthorized ? (
          <p role="alert" className="error-box">
            Could not reach the server: {me.error.message}
          </p>
        ) : (
          <p className="muted" aria-live="polite">
            Loading…
          </p>
        )}
      </main>
    </>
  );
}
