"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { NextIntlClientProvider, useLocale, useTranslations } from "next-intl";
import { type ReactNode, useEffect, useState } from "react";
import { CATALOGUES } from "@/i18n/catalogues";
import { isLocale, LOCALE_NAMES, LOCALES, type TLocale } from "@/i18n/locales";
import { ActivityProvider } from "./activity";
import { trpcErrorCode, useTRPC } from "./trpc-provider";
import { DetailSkeleton } from "./detail-skeleton";

type TNavKey = "home" | "approvals" | "questions" | "responses" | "sessions" | "grants" | "usage" | "analytics" | "policy" | "notifications" | "admin";
type TNavItem = { href: string; label: TNavKey; count?: "approvals" | "questions"; testId?: string; roles?: readonly string[] };

const NAV: TNavItem[] = [
  { href: "/", label: "home" },
  { href: "/approvals", label: "approvals", count: "approvals", testId: "nav-approvals-count" },
  { href: "/questions", label: "questions", count: "questions", testId: "nav-questions-count" },
  { href: "/responses", label: "responses" },
  { href: "/sessions", label: "sessions" },
  { href: "/grants", label: "grants" },
  { href: "/usage", label: "usage" },
  { href: "/analytics", label: "analytics" },
  { href: "/policy", label: "policy", roles: ["admin", "operator", "auditor"] },
  { href: "/notifications", label: "notifications", roles: ["admin", "operator", "auditor"] },
  { href: "/admin", label: "admin" },
];

/**
 * Signed-in frame of every console page, in the user's own language setting (`settings.get`;
 * none chosen: the browser's). The server already rendered the page (and its title) in that
 * setting (server/api/http/console-locale.ts); `settings.get` keeps it current after a change.
 */
export function AppShell({ children }: { children: ReactNode }) {
  const trpc = useTRPC();
  const browserLocale = useLocale();
  const me = useQuery(trpc.me.queryOptions());
  // Asked together with `me` (one batched request), so a page waits for no extra round trip.
  const settings = useQuery(trpc.settings.get.queryOptions());
  const chosen = settings.data?.locale ?? null;
  const locale: TLocale = chosen ?? browserLocale;
  useEffect(() => {
    document.documentElement.lang = locale;
  }, [locale]);
  return (
    <NextIntlClientProvider locale={locale} messages={CATALOGUES[locale]}>
      <Shell chosenLocale={chosen} settingsKnown={!me.data || !settings.isPending}>
        {children}
      </Shell>
    </NextIntlClientProvider>
  );
}

/** The console's language menu: the browser's, or one chosen for this user on every device. */
export function LanguageMenu({ chosen }: { chosen: TLocale | null }) {
  const trpc = useTRPC();
  const t = useTranslations("shell");
  const queryClient = useQueryClient();
  const router = useRouter();
  const setLocale = useMutation(
    trpc.settings.setLocale.mutationOptions({
      onSuccess: (saved) => {
        queryClient.setQueryData(trpc.settings.get.queryKey(), saved);
        // The server renders the page title and <html lang> in the user's setting: render them again.
        router.refresh();
      },
    }),
  );
  return (
    <label className="language-menu small">
      <span className="visually-hidden">{t("language")}</span>
      <select
        className="input"
        data-testid="console-language"
        value={chosen ?? ""}
        disabled={setLocale.isPending}
        onChange={(e) => setLocale.mutate({ locale: isLocale(e.target.value) ? e.target.value : null })}
      >
        <option value="">{t("browserLanguage")}</option>
        {LOCALES.map((l) => (
          <option key={l} value={l} lang={l}>
            {LOCALE_NAMES[l]}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Header, navigation with waiting counts, the live feed, and the redirect to /login. */
function Shell({ children, chosenLocale, settingsKnown }: { children: ReactNode; chosenLocale: TLocale | null; settingsKnown: boolean }) {
  const trpc = useTRPC();
  const t = useTranslations("shell");
  const common = useTranslations("common");
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
  // The menu's links appear together once the role (which links) and the counts (their widths)
  // are known: none moves under a pointer about to click it as they load.
  const navReady = signedIn && !waiting.isPending;
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
        {common("skipToContent")}
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
            <span aria-hidden="true">☰</span> {t("menu")}
            {waitingTotal > 0 ? (
              <>
                <span className="nav-count" aria-hidden="true">
                  {waitingTotal}
                </span>
                <span className="visually-hidden">{t("waiting", { n: waitingTotal })}</span>
              </>
            ) : null}
          </button>
          <nav aria-label={t("mainNav")} id="main-nav" data-open={menuOpen}>
            <ul className="nav">
              {(navReady ? NAV.filter((item) => !item.roles || (me.data && item.roles.includes(me.data.role))) : []).map((item) => {
                const n = countOf(item);
                return (
                  <li key={item.href}>
                    <Link href={item.href} aria-current={isActive(item.href) ? "page" : undefined}>
                      {t(`nav.${item.label}`)}
                      {n > 0 ? (
                        <>
                          <span className="nav-count" aria-hidden="true" data-testid={item.testId}>
                            {n}
                          </span>
                          <span className="visually-hidden">{t("waiting", { n })}</span>
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
              <Link href="/account" className="account-name" data-testid="signed-in-user" title={t("accountLink")}>
                {me.data.name} <span className="role">{t(`role.${me.data.role}`)}</span>
              </Link>
            ) : null}
            {me.data ? <LanguageMenu chosen={chosenLocale} /> : null}
            <button type="button" className="btn btn-quiet" onClick={signOut} disabled={signingOut || !me.data}>
              {t("signOut")}
            </button>
          </div>
        </div>
      </header>
      <main id="main" className="page">
        {me.data && settingsKnown ? (
          children
        ) : me.error && !unauthorized ? (
          <p role="alert" className="error-box">
            {t("unreachable", { message: me.error.message })}
          </p>
        ) : (
          <DetailSkeleton label={common("loading")} />
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
