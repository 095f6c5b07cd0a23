import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { ResponsesList } from "@/components/responses-list";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("responses") };
}

export default function ResponsesPage() {
  return <ResponsesList />;
}
