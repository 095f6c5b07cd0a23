import type { Metadata } from "next";
import type { ReactNode } from "react";
import { Providers } from "@/components/trpc-provider";
import "./globals.css";
import "./decisions.css";
import "./inbox.css";

export const metadata: Metadata = {
  title: { default: "Countersign", template: "%s · Countersign" },
  description: "Operator console: approve or deny what your AI agents want to do.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
