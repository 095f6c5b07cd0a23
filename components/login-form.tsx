"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useTranslations } from "next-intl";
import { type FormEvent, useEffect, useState } from "react";
import { safeNextPath } from "@/server/core/safe-next";
import { useTRPC } from "./trpc-provider";

/** The post-login destination from `?next=`, kept only when it stays on this origin (see safe-next.ts). */
function nextPath(): string {
  if (typeof window === "undefined") return "/";
  return safeNextPath(new URLSearchParams(window.location.search).get("next"), window.location.origin);
}

async function signIn(email: string, password: string, t: ReturnType<typeof useTranslations<"login">>): Promise<string | null> {
  let res: Response;
  try {
    res = await fetch("/api/auth/sign-in/email", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
  } catch {
    return t("unreachable");
  }
  if (res.ok) return null;
  if (res.status === 401) return t("invalid");
  const body = (await res.json().catch(() => null)) as { detail?: string; message?: string; code?: string } | null;
  if (res.status === 403 && body?.code === "password_login_off") return t("passwordOff");
  if (res.status === 429) {
    // The server's sentence names the wait (per address or per account); Retry-After is the same number.
    const wait = res.headers.get("retry-after");
    return body?.detail ?? t("tooMany", { wait: wait ?? t("aFew") });
  }
  return body?.detail ?? body?.message ?? t("failed", { status: res.status });
}

/** The codes a failed single sign-on comes back with (`/login?error=…`), as the sentence the page shows. */
const SSO_ERRORS = {
  sso_unreachable: "ssoUnreachable",
  invalid_code: "ssoUnreachable",
  SSO_NO_ROLE: "ssoNoRole",
  ACCOUNT_DISABLED: "ssoDisabled",
  unable_to_get_user_info: "ssoUnverified",
  account_not_linked: "ssoNotLinked",
} as const;

function ssoErrorKey(code: string | null): (typeof SSO_ERRORS)[keyof typeof SSO_ERRORS] | "ssoFailed" | null {
  if (!code) return null;
  return (SSO_ERRORS as Record<string, (typeof SSO_ERRORS)[keyof typeof SSO_ERRORS]>)[code] ?? "ssoFailed";
}

/**
 * The console's sign-in: "Sign in with <provider>" when single sign-on is configured (a link to
 * `/api/sso/start`, which comes back here with `?error=` when it fails), and the email + password
 * form (better-auth session cookie) unless password sign-in is off, when only break-glass users
 * open it.
 */
export function LoginForm() {
  const router = useRouter();
  const t = useTranslations("login");
  const queryClient = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const [breakGlass, setBreakGlass] = useState(false);
  const [ssoError, setSsoError] = useState<string | null>(null);
  // Already signed in (e.g. a second tab): go straight on.
  const trpc = useTRPC();
  const me = useQuery(trpc.me.queryOptions(undefined, { retry: false }));
  const methods = useQuery(trpc.signInMethods.queryOptions(undefined, { retry: 1 }));
  useEffect(() => {
    if (me.data) router.replace(nextPath());
  }, [me.data, router]);
  useEffect(() => {
    const code = new URLSearchParams(window.location.search).get("error");
    const key = ssoErrorKey(code);
    setSsoError(key ? t(key, { code: code ?? "" }) : null);
  }, [t]);
  const sso = methods.data?.sso ?? null;
  const showPassword = methods.data ? methods.data.password || breakGlass : !methods.isPending;

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(null);
    const failure = await signIn(String(form.get("email") ?? "").trim(), String(form.get("password") ?? ""), t);
    if (failure) {
      setError(failure);
      setPending(false);
      return;
    }
    queryClient.clear();
    router.replace(nextPath());
  }

  return (
    <>
      {ssoError ? (
        <p id="sso-error" role="alert" className="error-box login-sso-error" data-testid="sso-error">
          {ssoError}
        </p>
      ) : null}
      {sso ? (
        <a className="btn btn-primary btn-block" href={`/api/sso/start?next=${encodeURIComponent(nextPath())}`} data-testid="sso-sign-in">
          {t("ssoButton", { name: sso.name })}
        </a>
      ) : null}
      {methods.data && !methods.data.password && !breakGlass ? (
        <button type="button" className="login-break-glass" onClick={() => setBreakGlass(true)}>
          {t("breakGlass")}
        </button>
      ) : null}
      {showPassword ? <PasswordForm onSubmit={onSubmit} error={error} pending={pending} t={t} separated={sso !== null} /> : null}
    </>
  );
}

function PasswordForm({
  onSubmit,
  error,
  pending,
  t,
  separated,
}: {
  onSubmit: (event: FormEvent<HTMLFormElement>) => void;
  error: string | null;
  pending: boolean;
  t: ReturnType<typeof useTranslations<"login">>;
  separated: boolean;
}) {
  return (
    <form className={separated ? "login-form login-form-separated" : "login-form"} onSubmit={onSubmit} aria-describedby={error ? "login-error" : undefined}>
      <div className="field">
        <label htmlFor="email">{t("email")}</label>
        <input id="email" name="email" type="email" autoComplete="username" required aria-invalid={error ? true : undefined} />
      </div>
      <div className="field">
        <label htmlFor="password">{t("password")}</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required aria-invalid={error ? true : undefined} />
      </div>
      {error ? (
        <p id="login-error" role="alert" className="error-box">
          {error}
        </p>
      ) : null}
      <button type="submit" className="btn btn-primary btn-block" disabled={pending}>
        {pending ? t("submitting") : t("submit")}
      </button>
    </form>
  );
}
