import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { LoginForm } from "@/components/login-form";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("signIn") };
}

export default async function LoginPage() {
  const t = await getTranslations("login");
  return (
    <main className="login-page">
      <section className="login-card" aria-labelledby="login-title">
        <div className="brand brand-large">
          <span className="brand-mark" aria-hidden="true">
            ✓
          </span>
          Countersign
        </div>
        <h1 id="login-title">{t("title")}</h1>
        <p className="muted">{t("lead")}</p>
        <LoginForm />
      </section>
    </main>
  );
}
