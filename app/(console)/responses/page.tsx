import type { Metadata } from "next";
import { ResponsesList } from "@/components/responses-list";

export const metadata: Metadata = { title: "Responses" };

export default function ResponsesPage() {
  return <ResponsesList />;
}
