import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { UsagePage } from "@/components/usage-page";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("usage") };
}

export default function UsageRoute() {
  return <UsagePage />;
}
