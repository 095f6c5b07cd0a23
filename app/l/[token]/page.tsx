import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { LinkPage } from "@/components/link-page";

type TProps = { params: Promise<{ token: string }> };

export async function generateMetadata(): Promise<Metadata> {
  return {
    title: (await getTranslations("meta"))("link"),
    // The URL is a single-use credential: never send it on as a Referer, never index it.
    referrer: "no-referrer",
    robots: { index: false, follow: false },
  };
}

export default async function SingleUseLinkPage({ params }: TProps) {
  const { token } = await params;
  return <LinkPage token={token} />;
}
