import type { Metadata } from "next";
import { AppShell } from "@/components/app-shell";
import { QuestionsList } from "@/components/questions-list";

export const metadata: Metadata = { title: "Questions" };

export default function QuestionsPage() {
  return (
    <AppShell>
      <QuestionsList />
    </AppShell>
  );
}
