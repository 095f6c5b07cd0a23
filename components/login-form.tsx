"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useTranslations } from "next-intl";
import { type FormEvent, useEffect, useState } from "react";
import { safeNextPath } from "./safe-next";
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
  const body = (await res.json().catch(() => null)) as { detail?: string; message?: string } | null;
  if (res.status === 429) {
    // The server's sentence names the wait (per address or per account); Retry-After is the same number.
    const wait = res.headers.get("retry-after");
    return body?.detail ?? t("tooMany", { wait: wait ?? t("aFew") });
  }
  return body?.detail ?? body?.message ?? t("failed", { status: res.status });
}

/** Email + password sign-in for the console (better-auth session cookie). */
export function LoginForm() {
  const router = useRouter();
  const t = useTranslations("login");
  const queryClient = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  // Already signed in (e.g. a second tab): go straight on.
  const trpc = useTRPC();
  const me = useQuery(trpc.me.queryOptions(undefined, { retry: false }));
  useEffect(() => {
    if (me.data) router.replace(nextPath());
  }, [me.data, router]);

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
    <form className="login-form" onSubmit={onSubmit} aria-describedby={error ? "login-error" : undefined}>
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
