import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { Suspense } from "react";
import { DetailSkeleton } from "@/components/detail-skeleton";
import { PolicyPage } from "@/components/policy/policy-page";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("policy") };
}

/** The page reads its window from the query string (useSearchParams): rendered below a Suspense boundary. */
export default async function PolicyRoute() {
  const loading = (await getTranslations("common"))("loading");
  return (
    <Suspense fallback={<DetailSkeleton label={loading} />}>
      <PolicyPage />
    </Suspense>
  );
}
