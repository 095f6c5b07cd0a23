import type { Metadata } from "next";
import { LoginForm } from "@/components/login-form";

export const metadata: Metadata = { title: "Sign in" };

export default function LoginPage() {
  return (
    <main className="login-page">
      <section className="login-card" aria-labelledby="login-title">
        <div className="brand brand-large">
          <span className="brand-mark" aria-hidden="true">
            ✓
          </span>
          Countersign
        </div>
        <h1 id="login-title">Sign in to the operator console</h1>
        <p className="muted">Review and decide what your agents are asking to do.</p>
        <LoginForm />
      </section>
    </main>
  );
}
