import type { Metadata } from "next";
import { AppShell } from "@/components/app-shell";
import { ApprovalsInbox } from "@/components/approvals-inbox";

export const metadata: Metadata = { title: "Approvals" };

export default function InboxPage() {
  return (
    <AppShell>
      <ApprovalsInbox />
    </AppShell>
  );
}
