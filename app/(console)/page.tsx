import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { WaitingHome } from "@/components/waiting-home";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("waiting") };
}

export default function HomePage() {
  return <WaitingHome />;
}
