import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { ResponseDetail } from "@/components/response-detail";

type TProps = { params: Promise<{ id: string }> };

export async function generateMetadata({ params }: TProps): Promise<Metadata> {
  const { id } = await params;
  return { title: (await getTranslations("meta"))("response", { id }) };
}

export default async function ResponsePage({ params }: TProps) {
  const { id } = await params;
  return <ResponseDetail responseId={id} />;
}
