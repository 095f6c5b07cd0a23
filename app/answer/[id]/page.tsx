import type { Metadata } from "next";
import { AnswerPage } from "@/components/answer-page";

type TProps = { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

export const metadata: Metadata = {
  title: "Answer a question",
  // The page URL may carry an access token: never send it on as a Referer, never index it.
  referrer: "no-referrer",
  robots: { index: false, follow: false },
};

export default async function AnswerQuestionPage({ params, searchParams }: TProps) {
  const { id } = await params;
  const token = (await searchParams).access_token;
  const accessToken = typeof token === "string" && token.length > 0 ? token : null;
  return <AnswerPage questionId={id} accessToken={accessToken} />;
}
