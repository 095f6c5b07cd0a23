import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { GrantsPage } from "@/components/grants-page";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("grants") };
}

export default function Grants() {
  return <GrantsPage />;
}
