import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { QuestionsList } from "@/components/questions-list";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("questions") };
}

export default function QuestionsPage() {
  return <QuestionsList />;
}
