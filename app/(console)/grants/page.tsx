import type { Metadata } from "next";
import { GrantsPage } from "@/components/grants-page";

export const metadata: Metadata = { title: "Grants" };

export default function Grants() {
  return <GrantsPage />;
}
