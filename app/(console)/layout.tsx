import type { ReactNode } from "react";
import { AppShell } from "@/components/app-shell";

/** Every signed-in console page shares one shell (and one live activity feed) across navigations. */
export default function ConsoleLayout({ children }: { children: ReactNode }) {
  return <AppShell>{children}</AppShell>;
}
