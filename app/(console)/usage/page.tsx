import type { Metadata } from "next";
import { UsagePage } from "@/components/usage-page";

export const metadata: Metadata = { title: "Usage" };

export default function UsageRoute() {
  return <UsagePage />;
}
