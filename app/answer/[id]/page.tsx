import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { AnswerPage } from "@/components/answer-page";

type TProps = { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

export async function generateMetadata(): Promise<Metadata> {
  return {
    title: (await getTranslations("meta"))("answer"),
    // A link to this page may have carried an access token: never send anything on as a Referer, never index it.
    referrer: "no-referrer",
    robots: { index: false, follow: false },
  };
}

/**
 * `?access_token=` never reaches this page: the server exchanges it for a question-bound cookie
 * and redirects here without it (server/api/http/answer-link.ts), adding `?link=invalid` when the
 * key did not work.
 */
export default async function AnswerQuestionPage({ params, searchParams }: TProps) {
  const { id } = await params;
  return <AnswerPage questionId={id} linkRefused={(await searchParams).link === "invalid"} />;
}
