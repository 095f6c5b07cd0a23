import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { AdminPage } from "@/components/admin-page";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("admin") };
}

export default function AdminRoute() {
  return <AdminPage />;
}
