import type { Metadata } from "next";
import { AppShell } from "@/components/app-shell";
import { ResponsesList } from "@/components/responses-list";

export const metadata: Metadata = { title: "Responses" };

export default function ResponsesPage() {
  return (
    <AppShell>
      <ResponsesList />
    </AppShell>
  );
}
