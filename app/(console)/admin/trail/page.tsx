import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { AdminTrail } from "@/components/admin-trail";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("adminTrail") };
}

export default function AdminTrailRoute() {
  return <AdminTrail />;
}
