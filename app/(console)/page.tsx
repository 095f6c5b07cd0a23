import type { Metadata } from "next";
import { WaitingHome } from "@/components/waiting-home";

export const metadata: Metadata = { title: "Waiting" };

export default function HomePage() {
  return <WaitingHome />;
}
