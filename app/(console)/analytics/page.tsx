import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { Suspense } from "react";
import { AnalyticsPage } from "@/components/analytics-page";
import { DetailSkeleton } from "@/components/detail-skeleton";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("analytics") };
}

/** The page reads its filters from the query string (useSearchParams): rendered below a Suspense boundary. */
export default async function AnalyticsRoute() {
  const loading = (await getTranslations("common"))("loading");
  return (
    <Suspense fallback={<DetailSkeleton label={loading} />}>
      <AnalyticsPage />
    </Suspense>
  );
}
