import type { Metadata } from "next";
import { NextIntlClientProvider } from "next-intl";
import { getLocale, getTranslations } from "next-intl/server";
import type { ReactNode } from "react";
import { Providers } from "@/components/trpc-provider";
// Design tokens, base elements and shared primitives, then one file per feature. The order is the
// cascade's (a later file wins a tie of specificity): keep it, and add a new file where its rules
// must win; scripts/css-selectors.test.ts checks every stylesheet is imported and every class used.
import "./globals.css";
import "./styles/shell.css";
import "./styles/login.css";
import "./styles/lists.css";
import "./styles/output.css";
import "./styles/timeline.css";
import "./styles/decisions.css";
import "./styles/question.css";
import "./styles/inbox.css";
import "./styles/home.css";
import "./styles/response.css";
import "./styles/usage.css";
import "./styles/analytics.css";
import "./styles/policy.css";
import "./styles/admin.css";

export async function generateMetadata(): Promise<Metadata> {
  const t = await getTranslations("meta");
  return { title: { default: "Countersign", template: "%s · Countersign" }, description: t("description") };
}

/** The browser's language (i18n/request.ts) for every page; the console shell may switch to the user's setting. */
export default async function RootLayout({ children }: { children: ReactNode }) {
  const locale = await getLocale();
  return (
    <html lang={locale}>
      <body>
        <NextIntlClientProvider>
          <Providers>{children}</Providers>
        </NextIntlClientProvider>
      </body>
    </html>
  );
}
