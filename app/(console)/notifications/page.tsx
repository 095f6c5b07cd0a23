import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { NotificationsLog } from "@/components/notifications-log";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("notifications") };
}

export default function NotificationsRoute() {
  return <NotificationsLog />;
}
