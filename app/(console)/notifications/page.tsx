import type { Metadata } from "next";
import { NotificationsLog } from "@/components/notifications-log";

export const metadata: Metadata = { title: "Notifications" };

export default function NotificationsRoute() {
  return <NotificationsLog />;
}
