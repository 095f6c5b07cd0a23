import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { ApprovalsInbox } from "@/components/approvals-inbox";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("approvals") };
}

export default function ApprovalsPage() {
  return <ApprovalsInbox />;
}
