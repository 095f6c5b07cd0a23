import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { SessionDetail } from "@/components/session-detail";

type TProps = { params: Promise<{ id: string }> };

export async function generateMetadata({ params }: TProps): Promise<Metadata> {
  const { id } = await params;
  return { title: (await getTranslations("meta"))("session", { id }) };
}

export default async function SessionPage({ params }: TProps) {
  const { id } = await params;
  return <SessionDetail sessionId={id} />;
}
