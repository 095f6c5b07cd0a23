import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { SessionsList } from "@/components/sessions-list";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("sessions") };
}

export default function SessionsPage() {
  return <SessionsList />;
}
