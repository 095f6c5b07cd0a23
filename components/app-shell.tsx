"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { type ReactNode, useEffect, useState } from "react";
import { ActivityProvider } from "./activity";
import { trpcErrorCode, useTRPC } from "./trpc-provider";

type TNavItem = { href: string; label: string; count?: "approvals" | "questions"; testId?: string; roles?: readonly string[] };

const NAV: TNavItem[] = [
  { href: "/", label: "Home" },
  { href: "/approvals", label: "Approvals", count: "approvals", testId: "nav-approvals-count" },
  { href: "/questions", label: "Questions", count: "questions", testId: "nav-questions-count" },
  { href: "/responses", label: "Responses" },
  { href: "/sessions", label: "Sessions" },
  { href: "/grants", label: "Grants" },
  { href: "/usage", label: "Usage" },
  { href: "/notifications", label: "Notifications", roles: ["admin", "operator", "auditor"] },
  { href: "/admin", label: "Admin" },
];

/** Signed-in frame of every console page: header, navigation with waiting counts, the live feed, and the redirect to /login. */
export function AppShell({ children }: { children: ReactNode }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const queryClient = useQueryClient();
  const me = useQuery(trpc.me.queryOptions());
  const signedIn = Boolean(me.data);
  // What is waiting, for the counts next to "Approvals" and "Questions" (kept current by the activity feed).
  const waiting = useQuery(trpc.console.waiting.queryOptions(undefined, { enabled: signedIn }));
  const counts = waiting.data?.counts;
  const countOf = (item: TNavItem): number =>
    !counts || !item.count ? 0 : item.count === "approvals" ? counts.approval + counts.device : counts.question;
  const waitingTotal = NAV.reduce((sum, item) => sum + countOf(item), 0);
  const [signingOut, setSigningOut] = useState(false);
  // The phone-width menu (the nav is a button's panel at ≤ 600 px); closed again after each navigation.
  const [menuOpen, setMenuOpen] = useState(false);
  const unauthorized = trpcErrorCode(me.error) === "UNAUTHORIZED";

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new pathname is the navigation that closes the menu.
  useEffect(() => setMenuOpen(false), [pathname]);

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
    <ActivityProvider enabled={signedIn}>
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
          <button
            type="button"
            className="btn btn-quiet menu-toggle"
            aria-expanded={menuOpen}
            aria-controls="main-nav"
            onClick={() => setMenuOpen((open) => !open)}
            onKeyDown={(e) => {
              if (e.key === "Escape") setMenuOpen(false);
            }}
          >
            <span aria-hidden="true">☰</span> Menu
            {waitingTotal > 0 ? (
              <>
                <span className="nav-count" aria-hidden="true">
                  {waitingTotal}
                </span>
                <span className="visually-hidden">, {waitingTotal} waiting</span>
              </>
            ) : null}
          </button>
          <nav aria-label="Main" id="main-nav" data-open={menuOpen}>
            <ul className="nav">
              {NAV.filter((item) => !item.roles || (me.data && item.roles.includes(me.data.role))).map((item) => {
                const n = countOf(item);
                return (
                  <li key={item.href}>
                    <Link href={item.href} aria-current={isActive(item.href) ? "page" : undefined}>
                      {item.label}
                      {n > 0 ? (
                        <>
                          <span className="nav-count" aria-hidden="true" data-testid={item.testId}>
                            {n}
                          </span>
                          <span className="visually-hidden">, {n} waiting</span>
                        </>
                      ) : null}
                    </Link>
                  </li>
                );
              })}
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
    </ActivityProvider>
  );
}

/** The signed-in user (the shell renders pages only once it is known). */
export function useMe() {
  const trpc = useTRPC();
  const me = useQuery(trpc.me.queryOptions());
  return me.data ?? null;
}
